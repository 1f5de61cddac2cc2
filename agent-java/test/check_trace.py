#!/usr/bin/env python3
"""Independent checker of a trace directory written by libjportal.so (docs/trace-format.md, v1.0).

Decodes every record generically from the layouts in the file header, then checks framing, CRCs, seq
continuity, and the semantic rules the agent promises. Prints counts per record type and one line per
problem; exits 1 if any problem was found.

  check_trace.py DIR [--print-interpreter FILE] [--javap JAVAP] [--require TYPE ...] [--quiet]
"""
import argparse
import collections
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib

INVOKES = {0xB6, 0xB7, 0xB8, 0xB9, 0xBA}  # invokevirtual/special/static/interface/dynamic
ACC_NATIVE, ACC_ABSTRACT = 0x100, 0x400


def parse_layout(text):
    """'a:u32 b:[c:u8 d:str]' -> [('a','u32'), ('b', [('c','u8'), ('d','str')])]"""
    toks = re.findall(r"[^\s\[\]]+:\[|\]|[^\s\[\]]+", text)
    pos = 0

    def fields(end):
        nonlocal pos
        out = []
        while pos < len(toks) and toks[pos] != end:
            t = toks[pos]
            pos += 1
            if t.endswith(":["):
                sub = fields("]")
                pos += 1
                out.append((t[:-2], sub))
            else:
                name, typ = t.split(":")
                out.append((name, typ))
        return out

    return fields(None)


SCALARS = {"u8": "<B", "u16": "<H", "u32": "<I", "u64": "<Q", "i8": "<b", "i16": "<h", "i32": "<i", "i64": "<q", "w64": "<Q"}


def decode(layout, buf, off, end):
    rec = {}
    for name, typ in layout:
        if isinstance(typ, list):
            if off + 4 > end:
                raise ValueError("array count past payload")
            (n,) = struct.unpack_from("<I", buf, off)
            off += 4
            items = []
            for _ in range(n):
                item, off = decode(typ, buf, off, end)
                items.append(item)
            rec[name] = items
        elif typ in ("str", "bytes"):
            if off + 4 > end:
                raise ValueError("length past payload")
            (n,) = struct.unpack_from("<I", buf, off)
            off += 4
            if off + n > end:
                raise ValueError(f"{name}: {typ} runs past payload")
            v = bytes(buf[off:off + n])
            rec[name] = v.decode("utf-8", "replace") if typ == "str" else v
            off += n
        else:
            f = SCALARS[typ]
            sz = struct.calcsize(f)
            if off + sz > end:
                raise ValueError(f"{name} past payload")
            (rec[name],) = struct.unpack_from(f, buf, off)
            off += sz
            if typ in ("u64", "i64") and abs(rec[name]) >= 2**53:
                raise ValueError(f"{name}={rec[name]:#x} does not fit 2^53")
    return rec, off


def read_trace(path, problems):
    data = open(path, "rb").read()
    if data[:8] != b"JPORTAL\0":
        problems.append("bad magic")
        return {}, []
    major, minor, hsize, hcrc, ntypes = struct.unpack_from("<HHIII", data, 8)
    if major != 1:
        problems.append(f"major {major}")
    hdr = bytearray(data[:hsize])
    hdr[16:20] = b"\0\0\0\0"
    if zlib.crc32(hdr) != hcrc:
        problems.append("header crc mismatch")
    types = {}
    off = 24
    for _ in range(ntypes):
        (t,) = struct.unpack_from("<H", data, off)
        off += 2
        (n,) = struct.unpack_from("<I", data, off)
        name = data[off + 4:off + 4 + n].decode()
        off += 4 + n
        (n,) = struct.unpack_from("<I", data, off)
        layout = data[off + 4:off + 4 + n].decode()
        off += 4 + n
        types[t] = (name, parse_layout(layout))
    if off != hsize:
        problems.append(f"type table ends at {off}, header_size {hsize}")
    recs = []
    off = hsize
    expect_seq = 0
    while off < len(data):
        if off + 28 > len(data):
            problems.append(f"truncated record header at {off}")
            break
        size, typ, flags, seq, tsc, crc = struct.unpack_from("<IHHQQI", data, off)
        if size < 28 or off + size > len(data):
            problems.append(f"bad/truncated record size {size} at {off}")
            break
        rec = bytearray(data[off:off + size])
        rec[24:28] = b"\0\0\0\0"
        if zlib.crc32(rec) != crc:
            problems.append(f"crc mismatch at {off} (seq {seq})")
        if seq != expect_seq:
            problems.append(f"seq gap at {off}: expected {expect_seq}, got {seq}")
        expect_seq = seq + 1
        name, layout = types.get(typ, (f"T{typ}", None))
        payload = {}
        if layout is not None:
            try:
                payload, _ = decode(layout, data, off + 28, off + size)
            except ValueError as e:
                problems.append(f"{name} seq {seq}: {e}")
        recs.append((name, flags, seq, tsc, payload, off))
        off += size
    return types, recs


def class_methods(b):
    """Minimal class-file parser: {(name, desc): code bytes or None}."""
    pos = 10
    (cpn,) = struct.unpack_from(">H", b, 8)
    utf = {}
    i = 1
    while i < cpn:
        tag = b[pos]
        if tag == 1:
            (n,) = struct.unpack_from(">H", b, pos + 1)
            utf[i] = b[pos + 3:pos + 3 + n].decode("utf-8", "replace")
            pos += 3 + n
        elif tag in (3, 4, 9, 10, 11, 12, 17, 18):
            pos += 5
        elif tag in (5, 6):
            pos += 9
            i += 1
        elif tag in (7, 8, 16, 19, 20):
            pos += 3
        elif tag == 15:
            pos += 4
        else:
            raise ValueError(f"cp tag {tag}")
        i += 1
    pos += 6
    (ni,) = struct.unpack_from(">H", b, pos)
    pos += 2 + 2 * ni

    def members(pos, want_code):
        (n,) = struct.unpack_from(">H", b, pos)
        pos += 2
        out = {}
        for _ in range(n):
            _, ni_, di, na = struct.unpack_from(">HHHH", b, pos)
            pos += 8
            code = None
            for _ in range(na):
                an, alen = struct.unpack_from(">HI", b, pos)
                if want_code and utf.get(an) == "Code":
                    (clen,) = struct.unpack_from(">I", b, pos + 10)
                    code = b[pos + 14:pos + 14 + clen]
                pos += 6 + alen
            out[(utf.get(ni_), utf.get(di))] = code
        return out, pos

    _, pos = members(pos, False)
    methods, pos = members(pos, True)
    return methods


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--print-interpreter", help="stdout of the same run with -XX:+PrintInterpreter")
    ap.add_argument("--javap", help="javap to run on (up to 3) reconstructed classes")
    ap.add_argument("--require", nargs="*", default=[], help="record types that must be present")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    problems = []
    types, recs = read_trace(os.path.join(a.dir, "meta.jpt"), problems)
    counts = collections.Counter(r[0] for r in recs)
    by = collections.defaultdict(list)
    for r in recs:
        by[r[0]].append(r)
    info = {}

    # framing and order
    if not recs or recs[0][0] != "CALIBRATION":
        problems.append("first record is not CALIBRATION")
    if not recs or recs[-1][0] != "VM_END":
        problems.append("last record is not VM_END")
    elif recs[-2][0] != "CALIBRATION":
        problems.append("VM_END not preceded by CALIBRATION")
    last_tsc = 0
    for name, _, seq, tsc, _, _ in recs:
        if tsc < last_tsc:
            problems.append(f"tsc goes backwards at seq {seq}")
        last_tsc = tsc
    if recs and recs[-1][0] == "VM_END":
        end = recs[-1][4]
        if end["records"] != len(recs):  # records written, VM_END included
            problems.append(f"VM_END.records {end['records']} != {len(recs)} records in the file")
        stream = os.path.getsize(os.path.join(a.dir, "meta.jpt")) - recs[0][5]
        if end["bytes"] != stream:
            problems.append(f"VM_END.bytes {end['bytes']} != {stream} bytes of records in the file")
        info["dropped"] = end["dropped"]
        info["stalls"] = end["stalls"]
        if sum(r[4]["count"] for r in by["DROPPED"]) != end["dropped"]:
            info["dropped_not_reported"] = end["dropped"] - sum(r[4]["count"] for r in by["DROPPED"])

    # ids: METHOD before use; CLASS matching
    methods = {}
    classes = {}
    class_by_name = {}
    live = {}
    blob_sizes = {}
    patched = set()
    snap_ok = snap_bad = snap_patched = 0
    caller_frames = caller_ok = 0
    need_methods = []
    for name, flags, seq, tsc, p, off in recs:
        if name == "METHOD":
            if p["method"] in methods:
                problems.append(f"METHOD {p['method']} defined twice")
            methods[p["method"]] = p
        elif name == "CODE_BLOB":
            blob_sizes[p["address"]] = p["size"]
        elif name == "CLASS":
            classes[p["class_id"]] = p
            class_by_name[(p["loader"], p["name"])] = p
        elif name == "NMETHOD_LOAD":
            for mid in [p["method"]] + [f["method"] for pc in p["pcs"] for f in pc["frames"]]:
                if mid not in methods:
                    problems.append(f"NMETHOD_LOAD seq {seq} uses undefined method {mid}")
                    break
            if len(p["code"]) != p["code_size"]:
                problems.append(f"NMETHOD_LOAD seq {seq}: code length {len(p['code'])} != code_size")
            for pc in p["pcs"]:
                if not (p["code_begin"] <= pc["pc"] < p["code_begin"] + p["code_size"]):
                    problems.append(f"NMETHOD_LOAD seq {seq}: pc outside code")
                    break
                if pc["frames"] and pc["frames"][-1]["method"] != p["method"]:
                    problems.append(f"NMETHOD_LOAD seq {seq}: last frame is not the root method")
                    break
            need_methods.append(p)
            live[p["code_begin"]] = bytearray(p["code"])
        elif name == "NMETHOD_UNLOAD":
            if p["method"] not in methods:
                problems.append(f"NMETHOD_UNLOAD seq {seq}: undefined method")
            if live.pop(p["code_begin"], None) is None:
                problems.append(f"NMETHOD_UNLOAD seq {seq}: {p['code_begin']:#x} not live")
        elif name == "CODE_PATCH":
            cur = live.get(p["code_begin"])
            if cur is None and p["code_begin"] in blob_sizes:
                # a watched buffer blob (native signature handlers, InlineCacheBuffer)
                at = p["address"] - p["code_begin"]
                if at < 0 or at + len(p["bytes"]) > blob_sizes[p["code_begin"]]:
                    problems.append(f"CODE_PATCH seq {seq}: outside its code blob")
                continue
            if cur is None:
                problems.append(f"CODE_PATCH seq {seq}: nmethod {p['code_begin']:#x} not live")
                continue
            at = p["address"] - p["code_begin"]
            if at < 0 or at + len(p["bytes"]) > len(cur):
                problems.append(f"CODE_PATCH seq {seq}: outside its nmethod")
                continue
            cur[at:at + len(p["bytes"])] = p["bytes"]
            patched.add(p["code_begin"])
        elif name == "CODE_SNAPSHOT":
            cur = live.get(p["code_begin"])
            if cur is None or bytes(cur) != p["code"]:
                snap_bad += 1
            else:
                snap_ok += 1
                snap_patched += p["code_begin"] in patched
    if snap_bad:
        problems.append(f"{snap_bad} CODE_SNAPSHOTs differ from load + patches ({snap_ok} equal)")
    info["snapshots_equal"] = snap_ok
    info["snapshots_of_patched_nmethods_equal"] = snap_patched

    # caller frames must sit at invoke bytecodes (bytecode from the recorded class files)
    code_cache = {}

    image_frames = 0

    def bytecode(m):
        key = (m["loader"], m["class_name"])
        c = class_by_name.get(key)
        if c is not None and c["source"] == 3:
            return "image"  # named only: its bytes are in the JDK's lib/modules (read by the TypeScript tests)
        if key not in code_cache:
            c = class_by_name.get(key)
            try:
                code_cache[key] = class_methods(c["bytes"]) if c else None
            except Exception as e:  # noqa
                problems.append(f"class {m['class_name']} does not parse: {e}")
                code_cache[key] = None
        ms = code_cache[key]
        return None if ms is None else ms.get((m["name"], m["signature"]))

    no_code = set()
    for p in (need_methods if by["CLASS"] else []):  # classes=0: no class bytes to check against
        for pc in p["pcs"]:
            for i, f in enumerate(pc["frames"]):
                m = methods.get(f["method"])
                if m is None:
                    continue  # reported above
                if m["modifiers"] & (ACC_NATIVE | ACC_ABSTRACT):
                    continue
                code = bytecode(m)
                if code == "image":
                    image_frames += 1
                    continue
                if code is None:
                    no_code.add(f"{m['class_name']}.{m['name']}{m['signature']}")
                    continue
                if i > 0:
                    caller_frames += 1
                    if 0 <= f["bci"] < len(code) and code[f["bci"]] in INVOKES:
                        caller_ok += 1
                    else:
                        problems.append(f"caller frame {m['class_name']}.{m['name']}@{f['bci']} is not an invoke")
    info["caller_frames"] = caller_frames
    info["frames_of_runtime_image_classes"] = image_frames
    for c in classes.values():
        if c["source"] == 3 and (c["loader"] != 0 or len(c["bytes"]) != 0):
            problems.append(f"CLASS {c['name']} of source 3 (runtime image) has loader {c['loader']} and {len(c['bytes'])} bytes")
            break
    info["caller_frames_at_invokes"] = caller_ok
    if no_code:
        problems.append(f"{len(no_code)} methods in inlining chains without bytecode, e.g. {sorted(no_code)[:3]}")

    # interpreter
    codelets = [r[4] for r in by["CODELET"]]
    if by["INTERP_CODE"]:
        ic = by["INTERP_CODE"][0][4]
        for c in codelets:
            if not (ic["base"] <= c["begin"] <= c["end"] <= ic["base"] + len(ic["code"])):
                problems.append(f"codelet {c['description']} outside INTERP_CODE")
    spans = sorted((c["begin"], c["end"]) for c in codelets)
    import bisect
    starts = [s for s, _ in spans]

    def in_codelet(x):
        i = bisect.bisect_right(starts, x) - 1
        return i >= 0 and spans[i][0] <= x < spans[i][1]

    blobs = [r[4] for r in by["CODE_BLOB"]]
    for r in by["DISPATCH_TABLE"]:
        t = r[4]
        if len(t["entries"]) != t["states"] * t["per_state"]:
            problems.append(f"dispatch table {t['table']}: {len(t['entries'])} entries")
        outside = [e["target"] for e in t["entries"] if e["target"] and not in_codelet(e["target"])]
        if t["table"] == 3:
            outside = [x for x in outside if not any(b["address"] <= x < b["address"] + b["size"] for b in blobs)]
        if outside:
            problems.append(f"dispatch table {t['table']}: {len(outside)} entries outside codelets, e.g. {outside[0]:#x}")
    info["dispatch_tables"] = [(r[4]["table"], r[4]["source"], len(r[4]["entries"])) for r in by["DISPATCH_TABLE"]]
    if a.print_interpreter:
        printed = []
        for line in open(a.print_interpreter, errors="replace"):
            m = re.match(r"^(.*?)\s+\[0x([0-9a-f]+), 0x([0-9a-f]+)\]\s+(\d+) bytes", line)
            if m:
                printed.append((int(m.group(2), 16), int(m.group(3), 16)))
        mine = [(c["begin"], c["end"]) for c in codelets]
        same = sum(1 for x, y in zip(printed, mine) if x == y)
        info["codelets_matching_PrintInterpreter"] = f"{same}/{len(printed)} (recorded {len(mine)})"
        if same != len(printed) or len(mine) != len(printed):
            problems.append(f"codelets differ from PrintInterpreter: {same}/{len(printed)} equal, {len(mine)} recorded")
    info["codelet_kinds"] = dict(sorted(collections.Counter(c["kind"] for c in codelets).items()))

    # nmethods
    loads = [r[4] for r in by["NMETHOD_LOAD"]]
    info["nmethod_levels"] = dict(sorted(collections.Counter(n["level"] for n in loads).items()))
    info["osr_nmethods"] = sum(1 for n in loads if n["osr_bci"] >= 0)
    for n in loads:
        if not (-1 <= n["level"] <= 4):
            problems.append(f"nmethod level {n['level']}")
        if n["osr_bci"] >= 0 and n["osr_entry"] == 0:
            problems.append("OSR nmethod without osr_entry")
        if n["blob_begin"] and not (n["blob_begin"] < n["code_begin"] and n["insts_begin"] == n["code_begin"]):
            problems.append(f"nmethod blob/insts inconsistent at {n['code_begin']:#x}")
        if n["verified_entry"] and not (n["code_begin"] <= n["verified_entry"] < n["code_begin"] + n["code_size"]):
            problems.append("verified entry outside code")
    keyset = collections.Counter((n["code_begin"], n["method"], n["compile_id"]) for n in loads)
    dups = [k for k, v in keyset.items() if v > 1]
    if dups:
        problems.append(f"{len(dups)} nmethods recorded twice")

    # threads
    ts = [r[4] for r in by["THREAD_START"]]
    info["threads"] = len(ts)
    info["threads_without_os_tid"] = [t["name"] for t in ts if t["os_tid"] == 0]
    if info["threads_without_os_tid"]:
        problems.append(f"threads without OS tid: {info['threads_without_os_tid']}")
    tids = collections.Counter(t["java_tid"] for t in ts)
    if any(v > 1 for v in tids.values()):
        problems.append("a java thread started twice")

    # METHOD_RUNS (format 1.4): written at VM death when the VM counts (UseCompiler), naming recorded classes
    runs = [c for r in by.get("METHOD_RUNS", []) for c in r[4]["classes"]]
    info["method_runs"] = f"{len(runs)} classes, {sum(len(c['methods']) for c in runs)} methods"
    undefined = [c["class_id"] for c in runs if c["class_id"] not in classes]
    if undefined:
        problems.append(f"METHOD_RUNS names {len(undefined)} class ids without a CLASS record (first {undefined[0]})")
    flags = {f["name"]: f["value"] for r in by["VM_INFO"] for f in r[4]["flags"]}
    if by["CLASS"] and flags.get("UseCompiler") == "true" and by["VM_END"]:
        string = class_by_name.get((0, "java/lang/String"))
        listed = {m["name"] + m["signature"]: m for c in runs if string and c["class_id"] == string["class_id"] for m in c["methods"]}
        if not listed:
            problems.append("no METHOD_RUNS for java/lang/String (the VM counts entries: UseCompiler)")
        elif not any(m["invocations"] > 0 for m in listed.values()):
            problems.append("METHOD_RUNS: no method of java/lang/String counted an entry")

    # classes
    src = collections.Counter(c["source"] for c in classes.values())
    info["classes_by_source"] = dict(sorted(src.items()))
    for must in ("java/lang/Object", "java/lang/String", "java/util/HashMap"):
        if by["CLASS"] and (0, must) not in class_by_name:
            problems.append(f"no CLASS for {must} (boot loader)")
    if a.javap:
        rec = [c for c in classes.values() if c["source"] == 1]
        rec.sort(key=lambda c: ("LambdaForm" not in c["name"], c["class_id"]))
        ok = 0
        with tempfile.TemporaryDirectory() as tmp:
            for c in rec[:3]:
                f = os.path.join(tmp, f"c{c['class_id']}.class")
                open(f, "wb").write(c["bytes"])
                r = subprocess.run([a.javap, "-v", "-p", f], capture_output=True, text=True)
                if r.returncode != 0 or r.stderr or "Code:" not in r.stdout:
                    problems.append(f"javap rejects reconstructed {c['name']}: {r.stderr.strip()[:200]}")
                else:
                    ok += 1
        info["reconstructed_accepted_by_javap"] = f"{ok}/{min(3, len(rec))} ({[c['name'] for c in rec[:3]]})"
    for t in a.require:
        if counts[t] == 0:
            problems.append(f"no {t} records")
    info["replay_records"] = dict(collections.Counter(r[0] for r in recs if r[1] & 1))
    vm = by["VM_INFO"][0][4] if by["VM_INFO"] else None
    if vm:
        info["vm"] = f"{vm['java_version']} {vm['vm_name']}"
        info["flags"] = {f["name"]: f["value"] for f in vm["flags"]}
        info["heaps"] = [h["name"] for h in vm["heaps"]]
    logs = [f"{['info','warn','error'][r[4]['level']] if r[4]['level'] < 3 else r[4]['level']} {r[4]['component']}: {r[4]['message']}" for r in by["AGENT_LOG"]]

    if not a.quiet:
        print("records:", len(recs), dict(sorted(counts.items())))
        for k, v in info.items():
            print(f"  {k}: {v}")
        for l in logs:
            print("  AGENT_LOG", l)
    for p in problems[:40]:
        print("PROBLEM:", p)
    if len(problems) > 40:
        print(f"PROBLEM: ... and {len(problems) - 40} more")
    print("check_trace:", "OK" if not problems else f"{len(problems)} problems", f"({len(recs)} records)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

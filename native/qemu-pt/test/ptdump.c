/* ptdump: every packet of a PT stream as libipt's packet decoder sees it, one canonical line each, for the
 * TypeScript packet layer's packet-for-packet cross-check. Also `ptdump --fixture FILE` writes a stream with
 * every packet type libipt can encode, made with libipt's own encoder.
 *   line: OFFSET KIND FIELDS...      (numbers in decimal; ips are the raw payload as in the packet) */
#include <intel-pt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print(uint64_t off, const struct pt_packet *p) {
  printf("%" PRIu64 " ", off);
  switch (p->type) {
    case ppt_pad: printf("pad"); break;
    case ppt_psb: printf("psb"); break;
    case ppt_psbend: printf("psbend"); break;
    case ppt_fup: case ppt_tip: case ppt_tip_pge: case ppt_tip_pgd: {
      const char *k = p->type == ppt_fup ? "fup" : p->type == ppt_tip ? "tip" : p->type == ppt_tip_pge ? "tip.pge" : "tip.pgd";
      printf("%s ipc=%d ip=%" PRIu64, k, (int)p->payload.ip.ipc, p->payload.ip.ip);
      break;
    }
    case ppt_tnt_8: case ppt_tnt_64:
      printf("%s bits=%d payload=%" PRIu64, p->type == ppt_tnt_8 ? "tnt8" : "tnt64", p->payload.tnt.bit_size, p->payload.tnt.payload);
      break;
    case ppt_mode:
      if (p->payload.mode.leaf == pt_mol_exec) printf("mode.exec csl=%d csd=%d", p->payload.mode.bits.exec.csl, p->payload.mode.bits.exec.csd);
      else printf("mode.tsx intx=%d abrt=%d", p->payload.mode.bits.tsx.intx, p->payload.mode.bits.tsx.abrt);
      break;
    case ppt_pip: printf("pip cr3=%" PRIu64 " nr=%d", p->payload.pip.cr3, p->payload.pip.nr); break;
    case ppt_vmcs: printf("vmcs base=%" PRIu64, p->payload.vmcs.base); break;
    case ppt_cbr: printf("cbr ratio=%d", p->payload.cbr.ratio); break;
    case ppt_tsc: printf("tsc tsc=%" PRIu64, p->payload.tsc.tsc); break;
    case ppt_tma: printf("tma ctc=%d fc=%d", p->payload.tma.ctc, p->payload.tma.fc); break;
    case ppt_mtc: printf("mtc ctc=%d", p->payload.mtc.ctc); break;
    case ppt_cyc: printf("cyc value=%" PRIu64, p->payload.cyc.value); break;
    case ppt_stop: printf("stop"); break;
    case ppt_ovf: printf("ovf"); break;
    case ppt_mnt: printf("mnt payload=%" PRIu64, p->payload.mnt.payload); break;
    case ppt_exstop: printf("exstop ip=%d", p->payload.exstop.ip); break;
    case ppt_mwait: printf("mwait hints=%u ext=%u", p->payload.mwait.hints, p->payload.mwait.ext); break;
    case ppt_pwre: printf("pwre state=%d sub=%d hw=%d", p->payload.pwre.state, p->payload.pwre.sub_state, p->payload.pwre.hw); break;
    case ppt_pwrx:
      printf("pwrx last=%d deepest=%d interrupt=%d store=%d autonomous=%d", p->payload.pwrx.last, p->payload.pwrx.deepest, p->payload.pwrx.interrupt,
             p->payload.pwrx.store, p->payload.pwrx.autonomous);
      break;
    case ppt_ptw: printf("ptw size=%d ip=%d payload=%" PRIu64, p->payload.ptw.plc == 0 ? 4 : 8, p->payload.ptw.ip, p->payload.ptw.payload); break;
    default: printf("unknown type=%d", (int)p->type); break;
  }
  printf("\n");
}

static int fixture(const char *path) {
  static uint8_t buf[4096];
  struct pt_config cfg;
  pt_config_init(&cfg);
  cfg.begin = buf;
  cfg.end = buf + sizeof buf;
  struct pt_encoder *e = pt_alloc_encoder(&cfg);
  struct pt_packet ps[64];
  int n = 0;
#define P(t) (memset(&ps[n], 0, sizeof ps[n]), ps[n].type = (t), &ps[n++])
  P(ppt_psb);
  P(ppt_tsc)->payload.tsc.tsc = 0x123456789abcdull;
  { struct pt_packet *p = P(ppt_tma); p->payload.tma.ctc = 0xbeef; p->payload.tma.fc = 0x1ab; }
  P(ppt_cbr)->payload.cbr.ratio = 42;
  { struct pt_packet *p = P(ppt_mode); p->payload.mode.leaf = pt_mol_exec; p->payload.mode.bits.exec.csl = 1; }
  { struct pt_packet *p = P(ppt_pip); p->payload.pip.cr3 = 0x12345678000ull; p->payload.pip.nr = 1; }
  P(ppt_vmcs)->payload.vmcs.base = 0xabcdef000ull;
  { struct pt_packet *p = P(ppt_fup); p->payload.ip.ipc = pt_ipc_sext_48; p->payload.ip.ip = 0x7f0012345678ull; }
  P(ppt_psbend);
  P(ppt_pad);
  { struct pt_packet *p = P(ppt_tip_pge); p->payload.ip.ipc = pt_ipc_update_16; p->payload.ip.ip = 0x5678; }
  { struct pt_packet *p = P(ppt_tnt_8); p->payload.tnt.bit_size = 5; p->payload.tnt.payload = 0x15; }
  { struct pt_packet *p = P(ppt_tnt_64); p->payload.tnt.bit_size = 40; p->payload.tnt.payload = 0xa5a5a5a5a5ull; }
  { struct pt_packet *p = P(ppt_tip); p->payload.ip.ipc = pt_ipc_update_32; p->payload.ip.ip = 0x9abcdef0; }
  { struct pt_packet *p = P(ppt_tip); p->payload.ip.ipc = pt_ipc_update_48; p->payload.ip.ip = 0x123456789abcull; }
  { struct pt_packet *p = P(ppt_tip); p->payload.ip.ipc = pt_ipc_full; p->payload.ip.ip = 0xffffffff81000000ull; }
  P(ppt_mtc)->payload.mtc.ctc = 0xc3;
  P(ppt_cyc)->payload.cyc.value = 0x1f;
  P(ppt_cyc)->payload.cyc.value = 0x123456;
  { struct pt_packet *p = P(ppt_mode); p->payload.mode.leaf = pt_mol_tsx; p->payload.mode.bits.tsx.intx = 1; }
  { struct pt_packet *p = P(ppt_mode); p->payload.mode.leaf = pt_mol_tsx; p->payload.mode.bits.tsx.abrt = 1; }
  P(ppt_ovf);
  { struct pt_packet *p = P(ppt_fup); p->payload.ip.ipc = pt_ipc_update_16; p->payload.ip.ip = 0x1234; }
  { struct pt_packet *p = P(ppt_tip_pgd); p->payload.ip.ipc = pt_ipc_suppressed; }
  P(ppt_mnt)->payload.mnt.payload = 0x1122334455667788ull;
  P(ppt_exstop)->payload.exstop.ip = 0;
  P(ppt_exstop)->payload.exstop.ip = 1;
  { struct pt_packet *p = P(ppt_mwait); p->payload.mwait.hints = 0x22; p->payload.mwait.ext = 1; }
  { struct pt_packet *p = P(ppt_pwre); p->payload.pwre.state = 3; p->payload.pwre.sub_state = 5; p->payload.pwre.hw = 1; }
  { struct pt_packet *p = P(ppt_pwrx); p->payload.pwrx.last = 2; p->payload.pwrx.deepest = 6; p->payload.pwrx.interrupt = 1; p->payload.pwrx.autonomous = 1; }
  { struct pt_packet *p = P(ppt_ptw); p->payload.ptw.plc = 0; p->payload.ptw.ip = 1; p->payload.ptw.payload = 0xdeadbeef; }
  { struct pt_packet *p = P(ppt_ptw); p->payload.ptw.plc = 1; p->payload.ptw.ip = 0; p->payload.ptw.payload = 0x0123456789abcdefull; }
  P(ppt_stop);
  P(ppt_tip_pgd)->payload.ip.ipc = pt_ipc_suppressed;
  for (int i = 0; i < n; i++) {
    int r = pt_enc_next(e, &ps[i]);
    if (r < 0) {
      fprintf(stderr, "ptdump: libipt cannot encode packet %d (type %d): %s\n", i, (int)ps[i].type, pt_errstr(pt_errcode(r)));
      return 1;
    }
  }
  uint64_t off = 0;
  pt_enc_get_offset(e, &off);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(buf, 1, off, f) != off) return 1;
  fclose(f);
  pt_free_encoder(e);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--fixture")) return fixture(argv[2]);
  if (argc != 2) {
    fprintf(stderr, "usage: ptdump STREAM.pt | ptdump --fixture OUT.pt\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(n ? (size_t)n : 1);
  if (n && fread(b, 1, (size_t)n, f) != (size_t)n) return 2;
  fclose(f);
  struct pt_config cfg;
  pt_config_init(&cfg);
  cfg.begin = b;
  cfg.end = b + n;
  struct pt_packet_decoder *d = pt_pkt_alloc_decoder(&cfg);
  int r = pt_pkt_sync_forward(d);
  if (r < 0) {
    printf("error nosync\n");
    return 0;
  }
  for (;;) {
    uint64_t off = 0;
    pt_pkt_get_offset(d, &off);
    struct pt_packet p;
    r = pt_pkt_next(d, &p, sizeof p);
    if (r == -pte_eos) break;
    if (r < 0) {
      printf("%" PRIu64 " error %s\n", off, pt_errstr(pt_errcode(r)));
      /* resync at the next PSB, as a decoder would */
      if (pt_pkt_sync_forward(d) < 0) break;
      continue;
    }
    print(off, &p);
  }
  return 0;
}

/** The stylesheet of report.html (inlined; system fonts only). */
export const REPORT_CSS = `
:root { --fg: #1d2330; --muted: #5d6678; --line: #d9dde5; --bg: #f6f7f9; --card: #fff; --accent: #2f6fde; --gap: #d62839; }
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg); background: var(--bg); }
header { padding: 14px 24px; background: #1d2330; color: #fff; }
header h1 { margin: 0; font-size: 19px; font-weight: 600; }
header .sub { color: #aeb6c6; font-size: 12px; margin-top: 2px; word-break: break-all; }
main { padding: 12px 24px 40px; max-width: 1400px; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px; margin: 12px 0; }
section h2 { margin: 0 0 8px; font-size: 15px; font-weight: 600; }
.hint { color: var(--muted); font-size: 12px; font-weight: 400; margin-left: 8px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; }
.card { border: 1px solid var(--line); border-radius: 5px; padding: 6px 12px; min-width: 130px; }
.card .v { font-size: 18px; font-weight: 600; }
.card .k { color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .03em; }
.cols { display: flex; gap: 18px; flex-wrap: wrap; align-items: flex-start; }
.cols > div { flex: 1 1 420px; min-width: 0; }
table { border-collapse: collapse; width: 100%; font-size: 12px; }
th, td { text-align: left; padding: 2px 6px; border-bottom: 1px solid #eef0f4; vertical-align: top; }
th { color: var(--muted); font-weight: 500; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.m { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 11px; word-break: break-all; }
.bar { height: 14px; display: flex; border-radius: 3px; overflow: hidden; background: #e8ebf0; }
.bar > span { display: block; height: 100%; }
.legend span { display: inline-block; margin-right: 12px; font-size: 12px; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; border-radius: 2px; vertical-align: -1px; }
#flame { display: block; width: 100%; cursor: pointer; }
#flame text { font: 11px ui-monospace, "DejaVu Sans Mono", monospace; fill: #1d2330; pointer-events: none; }
#flame rect:hover { stroke: #1d2330; stroke-width: 1; }
.toolbar { margin: 0 0 6px; display: flex; gap: 8px; align-items: center; }
button { font: inherit; font-size: 12px; padding: 2px 10px; border: 1px solid var(--line); border-radius: 4px; background: #fff; cursor: pointer; }
.tl-thread { margin: 6px 0 10px; }
.tl-thread .name { font-weight: 600; font-size: 12px; }
canvas.timeline { display: block; width: 100%; border: 1px solid var(--line); border-radius: 3px; cursor: grab; background: #fcfcfd; }
#tip { position: fixed; pointer-events: none; background: rgba(29,35,48,.94); color: #fff; padding: 5px 8px; border-radius: 4px; font-size: 12px; max-width: 560px; display: none; z-index: 10; word-break: break-all; }
.cov-row { display: flex; align-items: center; gap: 8px; margin: 2px 0; }
.cov-row .cn { flex: 0 0 38%; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 11px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.cov-row .bar { flex: 1 1 auto; }
.cov-row .pc { flex: 0 0 90px; text-align: right; font-size: 11px; color: var(--muted); font-variant-numeric: tabular-nums; }
#errors { display: none; background: #fde8ea; color: #8b1020; border: 1px solid #f1a9b2; padding: 8px 12px; border-radius: 5px; white-space: pre-wrap; }
ul.files { margin: 4px 0; padding-left: 18px; columns: 2; }
a { color: var(--accent); }
`;

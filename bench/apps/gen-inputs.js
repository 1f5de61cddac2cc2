#!/usr/bin/env node
// Deterministic inputs for the application suite (bench/apps/setup.sh calls this): an XSL-FO document for fop,
// SQL scripts for h2 (indexes on every joined column), a text corpus for Lucene's IndexFiles, in a short and a
// full size each, plus the shipped SVG files and Python script copied from bench/apps/data.
//   node bench/apps/gen-inputs.js OUT_DIR
'use strict';
const fs = require('fs');
const path = require('path');

const out = path.resolve(process.argv[2] || path.join(__dirname, 'inputs'));
const data = path.join(__dirname, 'data');

/** The same pseudo-random sequence everywhere (LCG, glibc constants). */
function rng(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 1;
}
const SYLL = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'xe', 'zu', 'ber', 'dan', 'fel', 'gor', 'hin', 'jas', 'qua', 'wet'];
function makeWords(n, seed) {
  const r = rng(seed);
  const vocab = [];
  for (let i = 0; i < 2000; i++) {
    let w = '';
    const k = 1 + (r() % 3);
    for (let j = 0; j < k; j++) w += SYLL[r() % SYLL.length];
    vocab.push(w);
  }
  const words = [];
  // a Zipf-like draw: small indices far more often
  for (let i = 0; i < n; i++) words.push(vocab[Math.floor((r() % 1000) ** 2 / 500)]);
  return words;
}
const sentence = (ws) => ws[0][0].toUpperCase() + ws[0].slice(1) + ' ' + ws.slice(1).join(' ') + '.';

function write(rel, text) {
  const f = path.join(out, rel);
  fs.mkdirSync(path.dirname(f), { recursive: true });
  fs.writeFileSync(f, text);
}

// ---- batik: the shipped SVG files -------------------------------------------------------------------
for (const f of fs.readdirSync(data).filter((f) => f.endsWith('.svg'))) write(path.join('batik', f), fs.readFileSync(path.join(data, f)));

// ---- jython: the shipped script ----------------------------------------------------------------------
write(path.join('jython', 'bench.py'), fs.readFileSync(path.join(data, 'bench.py')));

// ---- fop: an FO document of N sections (headings, paragraphs, a list, a table) ------------------------
function fo(sections, seed) {
  const r = rng(seed);
  const ws = makeWords(sections * 700, seed);
  let p = 0;
  const take = (n) => ws.slice(p, (p += n));
  const body = [];
  for (let s = 1; s <= sections; s++) {
    body.push(`<fo:block font-size="14pt" font-weight="bold" space-before="12pt" keep-with-next="always" id="s${s}">${s}. ${sentence(take(4))}</fo:block>`);
    for (let k = 0; k < 3; k++) body.push(`<fo:block text-align="justify" space-before="6pt" hyphenate="false">${sentence(take(60 + (r() % 40)))} <fo:inline font-style="italic">${take(5).join(' ')}</fo:inline> ${sentence(take(30))}</fo:block>`);
    body.push('<fo:list-block provisional-distance-between-starts="18pt" space-before="6pt">');
    for (let k = 0; k < 4; k++)
      body.push(`<fo:list-item><fo:list-item-label end-indent="label-end()"><fo:block>&#x2022;</fo:block></fo:list-item-label><fo:list-item-body start-indent="body-start()"><fo:block>${sentence(take(12))}</fo:block></fo:list-item-body></fo:list-item>`);
    body.push('</fo:list-block>');
    body.push('<fo:table table-layout="fixed" width="100%" border="0.5pt solid black" space-before="6pt"><fo:table-column column-width="30%"/><fo:table-column column-width="20%"/><fo:table-column column-width="50%"/><fo:table-body>');
    for (let k = 0; k < 6; k++)
      body.push(`<fo:table-row><fo:table-cell border="0.5pt solid gray" padding="2pt"><fo:block>${take(2).join(' ')}</fo:block></fo:table-cell><fo:table-cell border="0.5pt solid gray" padding="2pt"><fo:block text-align="end">${r() % 100000}</fo:block></fo:table-cell><fo:table-cell border="0.5pt solid gray" padding="2pt"><fo:block>${sentence(take(8))}</fo:block></fo:table-cell></fo:table-row>`);
    body.push('</fo:table-body></fo:table>');
  }
  return `<?xml version="1.0" encoding="UTF-8"?>
<fo:root xmlns:fo="http://www.w3.org/1999/XSL/Format">
  <fo:layout-master-set>
    <fo:simple-page-master master-name="A4" page-height="29.7cm" page-width="21cm" margin="2cm">
      <fo:region-body margin-top="1cm" margin-bottom="1cm"/>
      <fo:region-before extent="1cm"/>
      <fo:region-after extent="1cm"/>
    </fo:simple-page-master>
  </fo:layout-master-set>
  <fo:page-sequence master-reference="A4">
    <fo:static-content flow-name="xsl-region-before"><fo:block text-align="center" font-size="9pt">jportal bench: fop</fo:block></fo:static-content>
    <fo:static-content flow-name="xsl-region-after"><fo:block text-align="center" font-size="9pt">page <fo:page-number/></fo:block></fo:static-content>
    <fo:flow flow-name="xsl-region-body" font-family="serif" font-size="10pt">
${body.join('\n')}
    </fo:flow>
  </fo:page-sequence>
</fo:root>
`;
}
write(path.join('fop', 'short.fo'), fo(3, 7));
write(path.join('fop', 'medium.fo'), fo(12, 7));
write(path.join('fop', 'full.fo'), fo(150, 7));

// ---- h2: a schema with indexes on every joined column, data from SYSTEM_RANGE, joins and aggregates ----------
function sql(customers, ordersPer) {
  const orders = customers * ordersPer;
  return `-- jportal bench: h2 (${customers} customers, ${orders} orders); every joined column is indexed
CREATE TABLE REGION(ID INT PRIMARY KEY, NAME VARCHAR(32));
CREATE TABLE CUSTOMER(ID INT PRIMARY KEY, NAME VARCHAR(64), REGION_ID INT, BALANCE DECIMAL(12,2));
CREATE TABLE PRODUCT(ID INT PRIMARY KEY, NAME VARCHAR(64), PRICE DECIMAL(10,2), CATEGORY INT);
CREATE TABLE ORDERS(ID INT PRIMARY KEY, CUSTOMER_ID INT, ORDERED DATE, STATUS CHAR(1));
CREATE TABLE LINEITEM(ORDER_ID INT, LINE INT, PRODUCT_ID INT, QTY INT, PRIMARY KEY(ORDER_ID, LINE));
INSERT INTO REGION SELECT X, 'region-' || X FROM SYSTEM_RANGE(1, 12);
INSERT INTO CUSTOMER SELECT X, 'customer-' || X, MOD(X * 7, 12) + 1, MOD(X * 7919, 100000) / 100.0 FROM SYSTEM_RANGE(1, ${customers});
INSERT INTO PRODUCT SELECT X, 'product-' || X, MOD(X * 131, 9000) / 10.0 + 1, MOD(X, 20) FROM SYSTEM_RANGE(1, 500);
INSERT INTO ORDERS SELECT X, MOD(X * 104729, ${customers}) + 1, DATEADD('DAY', MOD(X, 730), DATE '2023-01-01'), CASEWHEN(MOD(X, 5) = 0, 'O', 'F') FROM SYSTEM_RANGE(1, ${orders});
INSERT INTO LINEITEM SELECT O.X, L.X, MOD(O.X * 31 + L.X * 17, 500) + 1, MOD(O.X + L.X, 9) + 1 FROM SYSTEM_RANGE(1, ${orders}) O, SYSTEM_RANGE(1, 3) L;
CREATE INDEX IDX_CUSTOMER_REGION ON CUSTOMER(REGION_ID);
CREATE INDEX IDX_ORDERS_CUSTOMER ON ORDERS(CUSTOMER_ID);
CREATE INDEX IDX_ORDERS_DATE ON ORDERS(ORDERED);
CREATE INDEX IDX_LINEITEM_PRODUCT ON LINEITEM(PRODUCT_ID);
ANALYZE;
SELECT R.NAME, COUNT(*), SUM(L.QTY * P.PRICE) FROM REGION R JOIN CUSTOMER C ON C.REGION_ID = R.ID JOIN ORDERS O ON O.CUSTOMER_ID = C.ID JOIN LINEITEM L ON L.ORDER_ID = O.ID JOIN PRODUCT P ON P.ID = L.PRODUCT_ID GROUP BY R.NAME ORDER BY 3 DESC;
SELECT P.CATEGORY, COUNT(DISTINCT O.CUSTOMER_ID) FROM PRODUCT P JOIN LINEITEM L ON L.PRODUCT_ID = P.ID JOIN ORDERS O ON O.ID = L.ORDER_ID WHERE O.STATUS = 'O' GROUP BY P.CATEGORY ORDER BY P.CATEGORY;
SELECT C.ID, C.NAME, SUM(L.QTY) S FROM CUSTOMER C JOIN ORDERS O ON O.CUSTOMER_ID = C.ID JOIN LINEITEM L ON L.ORDER_ID = O.ID WHERE O.ORDERED BETWEEN DATE '2023-03-01' AND DATE '2023-06-30' GROUP BY C.ID, C.NAME ORDER BY S DESC, C.ID LIMIT 20;
SELECT YEAR(O.ORDERED), MONTH(O.ORDERED), COUNT(*), AVG(L.QTY) FROM ORDERS O JOIN LINEITEM L ON L.ORDER_ID = O.ID GROUP BY YEAR(O.ORDERED), MONTH(O.ORDERED) ORDER BY 1, 2;
UPDATE CUSTOMER SET BALANCE = BALANCE + 1 WHERE REGION_ID IN (SELECT ID FROM REGION WHERE MOD(ID, 3) = 0);
UPDATE ORDERS SET STATUS = 'X' WHERE MOD(ID, 11) = 0;
DELETE FROM LINEITEM WHERE ORDER_ID IN (SELECT ID FROM ORDERS WHERE STATUS = 'X');
SELECT COUNT(*), SUM(QTY) FROM LINEITEM;
SELECT C.REGION_ID, MAX(C.BALANCE), MIN(C.BALANCE) FROM CUSTOMER C WHERE EXISTS (SELECT 1 FROM ORDERS O WHERE O.CUSTOMER_ID = C.ID AND O.STATUS = 'O') GROUP BY C.REGION_ID ORDER BY 1;
`;
}
write(path.join('h2', 'short.sql'), sql(400, 2));
write(path.join('h2', 'medium.sql'), sql(1200, 2));
write(path.join('h2', 'full.sql'), sql(20000, 5));
// start-up cost: the same tool connecting and running one statement
write(path.join('h2', 'startup.sql'), 'SELECT 1;\n');

// ---- luindex: text files of generated words --------------------------------------------------------
function corpus(dir, files, wordsPerFile, seed) {
  fs.rmSync(path.join(out, dir), { recursive: true, force: true });
  const ws = makeWords(files * wordsPerFile, seed);
  for (let i = 0; i < files; i++) {
    const lines = [];
    for (let j = 0; j < wordsPerFile; j += 12) lines.push(sentence(ws.slice(i * wordsPerFile + j, i * wordsPerFile + Math.min(j + 12, wordsPerFile))));
    write(path.join(dir, `d${String(Math.floor(i / 100)).padStart(2, '0')}`, `doc${String(i).padStart(5, '0')}.txt`), lines.join('\n') + '\n');
  }
}
corpus(path.join('luindex', 'short'), 40, 400, 11);
corpus(path.join('luindex', 'medium'), 200, 400, 11);
corpus(path.join('luindex', 'full'), 20000, 600, 11);
corpus(path.join('luindex', 'startup'), 1, 12, 11); // start-up cost: one tiny document

process.stderr.write(`bench/apps: inputs written to ${out}\n`);

// @ts-check
// Markdown to a tree of plain nodes, and code highlighting: our own, small.
// Answers come from models, so the text is never parsed as HTML: every node
// becomes a DOM element built with createElement and textContent (toDOM), a
// link keeps only http(s) and mailto targets, and raw HTML in an answer shows
// as text. A node is a string (text) or [tag, attrs, ...children].

/** @typedef {string | [string, Record<string, string>, ...any[]]} MdNode */

const KEYWORDS = new Set((
  // Go, JavaScript/TypeScript, Python, Rust, C/C++/Java, shell, SQL: one set
  // is enough to make code readable; a wrong colour costs nothing.
  'break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var ' +
  'async await class catch delete do export extends finally function in instanceof let new of static super this throw try typeof void while with yield ' +
  'and as assert def del elif except from global is lambda nonlocal not or pass raise None True False ' +
  'fn impl let mut pub use mod crate self Self trait enum match where loop move ref unsafe dyn ' +
  'int long short char float double bool boolean byte unsigned signed sizeof public private protected final abstract implements throws void null true false nil ' +
  'then fi esac done echo local export ' +
  'SELECT FROM WHERE INSERT INTO UPDATE DELETE CREATE TABLE JOIN ON GROUP BY ORDER LIMIT AND OR NOT NULL'
).split(' '));

/**
 * highlight splits code into tokens: comments, strings, numbers, keywords.
 * @param {string} code
 * @param {string} lang
 * @returns {MdNode[]}
 */
export function highlight(code, lang) {
  /** @type {MdNode[]} */
  const out = [];
  const hashComments = /^(py|python|sh|bash|shell|zsh|yaml|yml|toml|rb|ruby|r|perl|make|makefile|dockerfile|conf|ini)$/i.test(lang);
  const dashComments = /^(sql|lua|haskell|hs)$/i.test(lang);
  let i = 0;
  let plain = '';
  const flush = () => { if (plain) { out.push(plain); plain = ''; } };
  /** @param {string} cls @param {string} text */
  const tok = (cls, text) => { flush(); out.push(['span', { class: 'tok-' + cls }, text]); };
  while (i < code.length) {
    const c = code[i];
    const rest = code.slice(i, i + 2);
    if ((rest === '//' && !hashComments) || (c === '#' && hashComments) || (rest === '--' && dashComments)) {
      let j = code.indexOf('\n', i);
      if (j < 0) j = code.length;
      tok('com', code.slice(i, j));
      i = j;
    } else if (rest === '/*' && !hashComments) {
      let j = code.indexOf('*/', i + 2);
      j = j < 0 ? code.length : j + 2;
      tok('com', code.slice(i, j));
      i = j;
    } else if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < code.length && code[j] !== c && !(code[j] === '\n' && c !== '`')) j += code[j] === '\\' ? 2 : 1;
      j = Math.min(j + 1, code.length);
      tok('str', code.slice(i, j));
      i = j;
    } else if (/[0-9]/.test(c) && !/[A-Za-z_0-9]/.test(code[i - 1] || '')) {
      const m = /^(0x[0-9a-fA-F_]+|[0-9][0-9_]*(\.[0-9_]+)?([eE][+-]?[0-9]+)?)/.exec(code.slice(i));
      const s = m ? m[0] : c;
      tok('num', s);
      i += s.length;
    } else if (/[A-Za-z_$]/.test(c)) {
      const m = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(code.slice(i));
      const w = m ? m[0] : c;
      if (KEYWORDS.has(w)) tok('kw', w);
      else if (code[i + w.length] === '(') tok('fn', w);
      else plain += w;
      i += w.length;
    } else {
      plain += c;
      i++;
    }
  }
  flush();
  return out;
}

/**
 * safeHref returns the link target when it is http(s) or mailto, else "".
 * @param {string} url
 */
export function safeHref(url) {
  const u = url.trim();
  return /^(https?:\/\/|mailto:)/i.test(u) ? u : '';
}

/**
 * inline parses code spans, links, bold, italics and strike-through.
 * @param {string} s
 * @returns {MdNode[]}
 */
export function inline(s) {
  /** @type {MdNode[]} */
  const out = [];
  const re = /(`+)([\s\S]*?[^`])\1(?!`)|\[([^\]]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)|\*\*([\s\S]+?)\*\*|__([\s\S]+?)__|\*([^*\s][^*]*?)\*|(?<![A-Za-z0-9])_([^_\s][^_]*?)_(?![A-Za-z0-9])|~~([\s\S]+?)~~|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/;
  let rest = s;
  while (rest) {
    const m = re.exec(rest);
    if (!m) {
      out.push(rest);
      break;
    }
    if (m.index > 0) out.push(rest.slice(0, m.index));
    if (m[1]) out.push(['code', {}, m[2].replace(/^ (.*) $/, '$1')]);
    else if (m[3] !== undefined) {
      const href = safeHref(m[4]);
      out.push(href ? ['a', { href, rel: 'noopener noreferrer nofollow', target: '_blank' }, ...inline(m[3])] : m[0]);
    } else if (m[5] !== undefined || m[6] !== undefined) out.push(['strong', {}, ...inline(m[5] ?? m[6])]);
    else if (m[7] !== undefined || m[8] !== undefined) out.push(['em', {}, ...inline(m[7] ?? m[8])]);
    else if (m[9] !== undefined) out.push(['del', {}, ...inline(m[9])]);
    else if (m[10] !== undefined) out.push(['a', { href: m[10], rel: 'noopener noreferrer nofollow', target: '_blank' }, m[10]]);
    rest = rest.slice(m.index + m[0].length);
  }
  return out;
}

/** @param {string} line */
function tableCells(line) {
  let l = line.trim();
  if (l.startsWith('|')) l = l.slice(1);
  if (l.endsWith('|')) l = l.slice(0, -1);
  return l.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

/**
 * markdown parses a document into block nodes.
 * @param {string} src
 * @returns {MdNode[]}
 */
export function markdown(src) {
  const lines = (src || '').replace(/\r\n?/g, '\n').split('\n');
  /** @type {MdNode[]} */
  const out = [];
  let i = 0;
  /** @type {string[]} */
  let para = [];
  const endPara = () => {
    if (para.length) out.push(['p', {}, ...inline(para.join('\n'))]);
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if ((m = /^(\s*)(`{3,}|~{3,})\s*([\w+#.-]*)/.exec(line))) {
      endPara();
      const fence = m[2];
      const lang = m[3] || '';
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
      i++;
      const code = body.join('\n');
      /** @type {Record<string, string>} */
      const attrs = lang ? { class: 'lang-' + lang.toLowerCase(), 'data-lang': lang } : {};
      out.push(['pre', {}, ['code', attrs, ...highlight(code, lang)]]);
      continue;
    }
    if ((m = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line))) {
      endPara();
      out.push(['h' + m[1].length, {}, ...inline(m[2])]);
      i++;
      continue;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      endPara();
      out.push(['hr', {}]);
      i++;
      continue;
    }
    if (/^\s{0,3}>/.test(line)) {
      endPara();
      const body = [];
      while (i < lines.length && /^\s{0,3}>/.test(lines[i])) body.push(lines[i++].replace(/^\s{0,3}>\s?/, ''));
      out.push(['blockquote', {}, ...markdown(body.join('\n'))]);
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(lines[i + 1])) {
      endPara();
      const head = tableCells(line);
      i += 2;
      const rows = [];
      while (i < lines.length && lines[i].includes('|') && lines[i].trim()) rows.push(tableCells(lines[i++]));
      out.push(['div', { class: 'table-wrap' }, ['table', {},
        ['thead', {}, ['tr', {}, ...head.map((c) => ['th', {}, ...inline(c)])]],
        ['tbody', {}, ...rows.map((r) => ['tr', {}, ...r.map((c) => ['td', {}, ...inline(c)])])]]]);
      continue;
    }
    if ((m = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(line))) {
      endPara();
      const ordered = /\d/.test(m[2]);
      const indent = m[1].length;
      /** @type {MdNode[]} */
      const items = [];
      while (i < lines.length) {
        const lm = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(lines[i]);
        if (!lm || lm[1].length !== indent || /\d/.test(lm[2]) !== ordered) break;
        const body = [lm[3]];
        i++;
        // Continuation and nested lines: indented more than the marker.
        while (i < lines.length && lines[i].trim() && /^\s+/.test(lines[i]) && (lines[i].match(/^\s*/) || [''])[0].length > indent) {
          body.push(lines[i].slice(Math.min(indent + 2, (lines[i].match(/^\s*/) || [''])[0].length)));
          i++;
        }
        const inner = markdown(body.join('\n'));
        // A one-paragraph item is shown without its paragraph.
        const kids = inner.length >= 1 && Array.isArray(inner[0]) && inner[0][0] === 'p' ? [...inner[0].slice(2), ...inner.slice(1)] : inner;
        items.push(['li', {}, ...kids]);
      }
      /** @type {Record<string, string>} */
      const attrs = {};
      if (ordered && m[2] !== '1.' && m[2] !== '1)') attrs.start = String(parseInt(m[2], 10));
      out.push([ordered ? 'ol' : 'ul', attrs, ...items]);
      continue;
    }
    if (!line.trim()) {
      endPara();
      i++;
      continue;
    }
    para.push(line);
    i++;
  }
  endPara();
  return out;
}

const ALLOWED = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'pre', 'code', 'span', 'strong', 'em', 'del', 'a', 'ul', 'ol', 'li',
  'blockquote', 'hr', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'div']);
const ATTRS = new Set(['class', 'href', 'rel', 'target', 'start', 'data-lang']);

/**
 * toDOM builds the nodes into parent, with createElement and text nodes only.
 * @param {MdNode[]} nodes
 * @param {Element} parent
 */
export function toDOM(nodes, parent) {
  for (const n of nodes) {
    if (typeof n === 'string') {
      parent.appendChild(document.createTextNode(n));
      continue;
    }
    const [tag, attrs, ...kids] = n;
    if (!ALLOWED.has(tag)) continue;
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (!ATTRS.has(k)) continue;
      if (k === 'href' && !safeHref(v)) continue;
      el.setAttribute(k, v);
    }
    toDOM(kids, el);
    parent.appendChild(el);
  }
}

/**
 * toText flattens nodes back to their text (tests, and the copy button).
 * @param {MdNode[]} nodes
 * @returns {string}
 */
export function toText(nodes) {
  return nodes.map((n) => (typeof n === 'string' ? n : toText(n.slice(2)))).join('');
}

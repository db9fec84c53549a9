// Switchboard: a small Markdown renderer for text from the model (served at
// /static/markdown.js). It builds DOM nodes and never parses HTML: every piece of the text
// becomes a text node, so markup in the text (`<img onerror=…>`) is shown, never run.
// Covers what chat replies use: paragraphs, headings, fenced code, lists, quotes, rules,
// `code`, **bold**, *italic*, ~~strike~~ and [links](https://…) (http, https and mailto
// only). Anything else is shown as written.
"use strict";
(function () {
  // Bounds: the longest text rendered as Markdown (the rest is shown plain), and how deep
  // quotes and inline emphasis may nest.
  const MAX_CHARS = 100000;
  const MAX_DEPTH = 4;
  const SAFE_URL = /^(https?:\/\/|mailto:)/i;

  function el(tag, cls) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    return e;
  }

  // --- inline ---------------------------------------------------------------------------
  function inline(parent, text, depth) {
    // Markers known to be absent from some position on: each search for a closing marker
    // that fails is not repeated, so a text full of `*` stays linear.
    const absent = new Set();
    const find = (marker, from) => {
      if (absent.has(marker)) return -1;
      const i = text.indexOf(marker, from);
      if (i === -1) absent.add(marker);
      return i;
    };
    // The closing `marker` after `from`, not right at it.
    const closing = (marker, from) => {
      let i = find(marker, from);
      if (i === from) i = find(marker, from + 1);
      return i;
    };
    let plain = "";
    const flush = () => {
      if (plain) parent.appendChild(document.createTextNode(plain));
      plain = "";
    };
    let i = 0;
    while (i < text.length) {
      const c = text[i];
      if (c === "\\" && i + 1 < text.length && /[\\`*_~\[\]()#>+\-.!|]/.test(text[i + 1])) {
        plain += text[i + 1];
        i += 2;
        continue;
      }
      if (c === "`") {
        let n = 1;
        while (text[i + n] === "`") n++;
        const fence = "`".repeat(n);
        const end = find(fence, i + n);
        if (end !== -1) {
          flush();
          const code = el("code");
          code.textContent = text.slice(i + n, end);
          parent.appendChild(code);
          i = end + n;
          continue;
        }
        plain += fence;
        i += n;
        continue;
      }
      if (depth < MAX_DEPTH) {
        const two = text.slice(i, i + 2);
        if (two === "**" || two === "__" || two === "~~") {
          const end = closing(two, i + 2);
          if (end !== -1 && text[i + 2] !== " ") {
            flush();
            const e = el(two === "~~" ? "del" : "strong");
            inline(e, text.slice(i + 2, end), depth + 1);
            parent.appendChild(e);
            i = end + 2;
            continue;
          }
        } else if ((c === "*" || c === "_") && text[i + 1] !== " " && text[i + 1] !== undefined) {
          // `_` only at a word start: snake_case_names stay as they are.
          const wordStart = i === 0 || !/[A-Za-z0-9]/.test(text[i - 1]);
          const end = closing(c, i + 1);
          if (end !== -1 && (c === "*" || wordStart) && text[end - 1] !== " ") {
            flush();
            const e = el("em");
            inline(e, text.slice(i + 1, end), depth + 1);
            parent.appendChild(e);
            i = end + 1;
            continue;
          }
        }
        if (c === "[") {
          const close = find("](", i + 1);
          const end = close === -1 ? -1 : find(")", close + 2);
          if (end !== -1) {
            const url = text.slice(close + 2, end).trim();
            if (SAFE_URL.test(url) && !/\s/.test(url)) {
              flush();
              const a = el("a");
              a.href = url;
              a.target = "_blank";
              a.rel = "noopener noreferrer nofollow";
              inline(a, text.slice(i + 1, close), depth + 1);
              parent.appendChild(a);
              i = end + 1;
              continue;
            }
          }
        }
      }
      plain += c;
      i++;
    }
    flush();
  }

  // --- blocks ---------------------------------------------------------------------------
  const FENCE = /^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)\s*$/;
  const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
  const QUOTE = /^\s{0,3}>\s?(.*)$/;
  const ITEM = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/;

  function startsBlock(line) {
    return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line);
  }

  function blocks(parent, lines, depth) {
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if (line.trim() === "") {
        i++;
      } else if ((m = FENCE.exec(line))) {
        const fence = m[1];
        const body = [];
        i++;
        while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
        i++; // the closing fence (or the end)
        const pre = el("pre");
        const code = el("code");
        if (m[2]) code.dataset.lang = m[2];
        code.textContent = body.join("\n");
        pre.appendChild(code);
        parent.appendChild(pre);
      } else if ((m = HEADING.exec(line))) {
        const h = el("h" + Math.min(m[1].length + 2, 6));
        inline(h, m[2], 0);
        parent.appendChild(h);
        i++;
      } else if (RULE.test(line)) {
        parent.appendChild(el("hr"));
        i++;
      } else if (QUOTE.test(line) && depth < MAX_DEPTH) {
        const inner = [];
        while (i < lines.length && (m = QUOTE.exec(lines[i]))) {
          inner.push(m[1]);
          i++;
        }
        const q = el("blockquote");
        blocks(q, inner, depth + 1);
        parent.appendChild(q);
      } else if ((m = ITEM.exec(line))) {
        const ordered = /\d/.test(m[1]);
        const list = el(ordered ? "ol" : "ul");
        if (ordered && parseInt(m[1], 10) !== 1) list.start = parseInt(m[1], 10);
        while (i < lines.length && (m = ITEM.exec(lines[i])) && /\d/.test(m[1]) === ordered) {
          const text = [m[2]];
          i++;
          // Continuation lines: indented, not a new item or block.
          while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !ITEM.test(lines[i])) {
            text.push(lines[i].trim());
            i++;
          }
          const li = el("li");
          inline(li, text.join("\n"), 0);
          list.appendChild(li);
        }
        parent.appendChild(list);
      } else {
        const text = [line];
        i++;
        while (i < lines.length && lines[i].trim() !== "" && !startsBlock(lines[i])) text.push(lines[i++]);
        const p = el("p");
        inline(p, text.join("\n"), 0);
        parent.appendChild(p);
      }
    }
  }

  // Renders `text` into a fragment of DOM nodes.
  function render(text) {
    const frag = document.createDocumentFragment();
    text = String(text ?? "");
    if (text.length > MAX_CHARS) {
      frag.appendChild(document.createTextNode(text));
      return frag;
    }
    blocks(frag, text.replace(/\r\n?/g, "\n").split("\n"), 0);
    return frag;
  }

  // Replaces the children of `target` with `text` rendered.
  function renderInto(target, text) {
    target.replaceChildren(render(text));
    target.classList.add("md");
  }

  window.SwitchboardMarkdown = { render: render, renderInto: renderInto };
})();

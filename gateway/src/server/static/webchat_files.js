// Switchboard web chat: files (served at /static/webchat_files.js, loaded before
// webchat.js). A file dropped on the page or pasted into the box is uploaded at once
// (POST /api/webchat/uploads with the token; the gateway caps it at media.maxBytes) and
// named by its id in the next message; a `file` frame (a file the agent sent) becomes a
// download button, fetched with the token (a plain link cannot carry it) and saved.
"use strict";
window.SwitchboardFiles = {
  init: function (opts) {
    const token = opts.token;
    const pending = [];
    const bar = document.createElement("div");
    bar.id = "attachments";
    bar.hidden = true;
    opts.formEl.parentNode.insertBefore(bar, opts.formEl);

    function auth() {
      return token ? { Authorization: "Bearer " + token } : {};
    }

    function human(n) {
      if (n < 1024) return n + " bytes";
      if (n < 1024 * 1024) return Math.round(n / 1024) + " KB";
      return (n / (1024 * 1024)).toFixed(1) + " MB";
    }

    function redraw() {
      bar.textContent = "";
      for (const f of pending) {
        const chip = document.createElement("span");
        chip.className = "attachment";
        chip.textContent = "📎 " + f.name;
        bar.appendChild(chip);
      }
      bar.hidden = pending.length === 0;
    }

    async function upload(file) {
      const name = file.name || "pasted" + (file.type === "image/png" ? ".png" : "");
      try {
        const r = await fetch("/api/webchat/uploads", { method: "POST", headers: auth(), body: file });
        const body = await r.json().catch(() => ({}));
        if (!r.ok) throw new Error(body.error || "HTTP " + r.status);
        pending.push({ id: String(body.id), name: name, mime: file.type || undefined });
        redraw();
      } catch (e) {
        opts.addMessage("error", name + " was not uploaded: " + e.message);
      }
    }

    function uploadAll(list) {
      for (const f of Array.from(list || [])) upload(f);
    }

    document.addEventListener("dragover", (e) => e.preventDefault());
    document.addEventListener("drop", (e) => {
      e.preventDefault();
      if (e.dataTransfer) uploadAll(e.dataTransfer.files);
    });
    opts.inputEl.addEventListener("paste", (e) => {
      const files = e.clipboardData && e.clipboardData.files;
      if (files && files.length > 0) {
        e.preventDefault();
        uploadAll(files);
      }
    });

    async function download(file) {
      const r = await fetch("/api/webchat/files/" + encodeURIComponent(file.id), { headers: auth() });
      if (!r.ok) {
        // 410: past media.keepDays; the gateway says so in its error.
        const body = await r.json().catch(() => ({}));
        throw new Error(body.error || "HTTP " + r.status);
      }
      const url = URL.createObjectURL(await r.blob());
      const a = document.createElement("a");
      a.href = url;
      a.download = file.name;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
    }

    return {
      // The uploads waiting for the next message (taken: the list is emptied).
      take: function () {
        const out = pending.splice(0, pending.length);
        redraw();
        return out;
      },
      // A `file` frame (or a history entry with a file): a download button in an
      // assistant message, which is returned.
      show: function (frame) {
        const file = frame.file || {};
        const div = opts.addMessage("assistant", "");
        div.classList.add("file");
        const b = document.createElement("button");
        b.type = "button";
        b.className = "download";
        b.textContent = "⬇ " + String(file.name) + " (" + human(Number(file.size) || 0) + ")";
        b.addEventListener("click", () => {
          download(file).catch((e) => opts.addMessage("error", String(file.name) + ": " + e.message));
        });
        div.appendChild(b);
        return div;
      },
    };
  },
};

// The page is a pure function of the agent's event stream: a reload
// replays the buffered events and rebuilds the same view.
"use strict";

const log = document.getElementById("log");
const statusEl = document.getElementById("status");
const stopBtn = document.getElementById("stop");
const form = document.getElementById("composer");
const input = document.getElementById("input");

let epoch = "", lastSeq = 0; // events of this epoch at or below lastSeq were already applied
let bubble = null;         // the assistant message being streamed
let toolsBox = null;       // the tool cards of the current turn
const cards = new Map();   // toolCallId -> card element

const textOf = (content) =>
  (content || []).filter((c) => c.type === "text").map((c) => c.text).join("");

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function scroll() { log.scrollTop = log.scrollHeight; }

function setBusy(busy) {
  statusEl.textContent = busy ? "working…" : "idle";
  statusEl.className = busy ? "busy" : "idle";
  stopBtn.disabled = !busy;
}

const handlers = {
  agent_start() { setBusy(true); },
  agent_end() { setBusy(false); bubble = null; },
  turn_start() { toolsBox = null; },
  message_start(e) {
    if (e.message.role === "assistant") {
      bubble = log.appendChild(el("div", "msg assistant"));
      bubble.dataset.streaming = "true";
    }
  },
  message_update(e) {
    // The wire carries the change only: text deltas append to the bubble.
    const d = e.assistantMessageEvent;
    if (bubble && d && d.type === "text_delta") bubble.textContent += d.delta;
    scroll();
  },
  message_end(e) {
    const m = e.message;
    if (m.role === "user") {
      log.appendChild(el("div", "msg user", typeof m.content === "string" ? m.content : textOf(m.content)));
    } else if (m.role === "assistant") {
      const b = bubble || log.appendChild(el("div", "msg assistant"));
      b.textContent = textOf(m.content) || (m.errorMessage ? "" : "…");
      delete b.dataset.streaming;
      if (m.errorMessage) {
        b.classList.add("error");
        b.textContent += (b.textContent ? "\n" : "") + "(" + m.stopReason + ": " + m.errorMessage + ")";
      }
      if (!m.content.some((c) => c.type === "toolCall")) b.classList.add("final");
      if (!b.textContent) b.remove();
      bubble = null;
    }
    scroll();
  },
  tool_execution_start(e) {
    if (!toolsBox) toolsBox = log.appendChild(el("div", "turn-tools"));
    const card = toolsBox.appendChild(el("div", "tool-card running"));
    card.dataset.callId = e.toolCallId;
    card.append(el("div", "name", e.toolName), el("div", "args", JSON.stringify(e.args)),
      el("div", "progress", "started"), el("div", "result"));
    cards.set(e.toolCallId, card);
    scroll();
  },
  tool_execution_update(e) {
    const card = cards.get(e.toolCallId);
    if (card) card.querySelector(".progress").textContent = textOf(e.partialResult.content);
  },
  tool_execution_end(e) {
    const card = cards.get(e.toolCallId);
    if (!card) return;
    card.classList.remove("running");
    card.classList.add(e.isError ? "error" : "done");
    card.querySelector(".progress").textContent = e.isError ? "failed" : "done";
    card.querySelector(".result").textContent = textOf(e.result.content);
  },
};

function connect() {
  const source = new EventSource("/api/events");
  for (const name of Object.keys(handlers)) {
    source.addEventListener(name, (msg) => {
      // Ids are "EPOCH-SEQ": a restarted server has a new epoch.
      const [e, s] = (msg.lastEventId || "").split("-");
      const seq = Number(s);
      if (e && seq) {
        if (e === epoch && seq <= lastSeq) return; // never apply an event twice
        epoch = e;
        lastSeq = seq;
      }
      handlers[name](JSON.parse(msg.data));
    });
  }
  source.addEventListener("gap", () => {
    log.appendChild(el("div", "msg assistant error", "(some earlier events are no longer available)"));
  });
}

form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const text = input.value.trim();
  if (!text) return;
  input.value = "";
  const resp = await fetch("/api/send", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ text }) });
  if (!resp.ok) alert(await resp.text());
});

stopBtn.addEventListener("click", () => fetch("/api/stop", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" }));

connect();

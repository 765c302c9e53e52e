// The page is a pure function of the agent's event stream: a load starts
// from a snapshot of the conversation (kept by the server), then follows the
// events live; a reconnect resumes after the last event it applied.
"use strict";

const log = document.getElementById("log");
const statusEl = document.getElementById("status");
const stopBtn = document.getElementById("stop");
const form = document.getElementById("composer");
const input = document.getElementById("input");

let epoch = "", lastSeq = 0; // events of this epoch at or below lastSeq were already applied
let bubble = null;         // the assistant message being streamed
let attempt = 0;           // the model attempt the bubble shows (a later one starts it over)
let unshown = "";          // streamed text not yet on the page (shown once a frame)
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
      attempt = e.attempt || 0;
    }
  },
  message_update(e) {
    // The wire carries the change only: text deltas append to the bubble,
    // once a frame however many arrive (appending each alone would lay the
    // whole text out again for every piece).
    const d = e.assistantMessageEvent;
    if (!bubble || !d) return;
    const a = e.attempt || 0;
    if (a < attempt) return; // a superseded attempt's late delta
    if (a > attempt) {
      // The model was retried or failed over: drop what the earlier
      // attempt streamed.
      attempt = a;
      bubble.textContent = "";
      unshown = "";
    }
    if (d.type !== "text_delta") return;
    if (!unshown) requestAnimationFrame(showStreamed);
    unshown += d.delta;
  },
  message_end(e) {
    showStreamed();
    showMessage(e.message);
    scroll();
  },
  tool_execution_start(e) {
    toolCard(e.toolCallId, e.toolName, e.args).classList.add("running");
    scroll();
  },
  tool_execution_update(e) {
    const card = cards.get(e.toolCallId);
    if (card) card.querySelector(".progress").textContent = textOf(e.partialResult.content);
  },
  tool_execution_end(e) {
    finishCard(e.toolCallId, e.isError, e.result.content);
  },
  snapshot(e) {
    // The conversation so far, in one piece: the view is rebuilt from it.
    log.replaceChildren();
    cards.clear();
    bubble = null;
    unshown = "";
    attempt = 0;
    toolsBox = null;
    if (e.omitted) log.appendChild(el("div", "msg assistant error",
      e.omitted === 1 ? "(1 earlier message is no longer kept)" : "(" + e.omitted + " earlier messages are no longer kept)"));
    for (const m of e.messages) showMessage(m);
    for (const t of e.tools) {
      const card = toolCard(t.toolCallId, t.toolName, t.args);
      card.classList.add("running");
      if (t.partialResult) card.querySelector(".progress").textContent = textOf(t.partialResult.content);
    }
    if (e.streaming) {
      bubble = log.appendChild(el("div", "msg assistant", textOf(e.streaming.content)));
      bubble.dataset.streaming = "true";
    }
    setBusy(e.running);
    scroll();
  },
};

// showStreamed appends the text streamed since the last frame.
function showStreamed() {
  if (bubble && unshown) {
    bubble.append(unshown);
    scroll();
  }
  unshown = "";
}

// showMessage shows a message that ended: the user's, the assistant's (its
// text, and a card per tool call), or a tool's result (on its card).
function showMessage(m) {
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
    const calls = m.content.filter((c) => c.type === "toolCall");
    if (!calls.length) b.classList.add("final");
    if (!b.textContent) b.remove();
    bubble = null;
    toolsBox = null;
    for (const c of calls) toolCard(c.id, c.name, c.arguments);
  } else if (m.role === "toolResult") {
    finishCard(m.toolCallId, m.isError, m.content);
  }
}

// toolCard returns the card of a tool call, making it if there is none.
function toolCard(id, name, args) {
  let card = cards.get(id);
  if (card) return card;
  if (!toolsBox) toolsBox = log.appendChild(el("div", "turn-tools"));
  card = toolsBox.appendChild(el("div", "tool-card"));
  card.dataset.callId = id;
  card.append(el("div", "name", name), el("div", "args", JSON.stringify(args)),
    el("div", "progress", "started"), el("div", "result"));
  cards.set(id, card);
  return card;
}

function finishCard(id, isError, content) {
  const card = cards.get(id);
  if (!card) return;
  card.classList.remove("running");
  card.classList.add(isError ? "error" : "done");
  card.querySelector(".progress").textContent = isError ? "failed" : "done";
  card.querySelector(".result").textContent = textOf(content);
}

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
      const data = JSON.parse(msg.data);
      // A nested run's events (a child agent's, "path" naming the calls
      // that led to it) are not shown yet: they would mix into this run's.
      if (data.path && data.path.length) return;
      handlers[name](data);
    });
  }
  // A gap (events this page missed are no longer kept) is always followed
  // by a snapshot, which rebuilds the view.
  source.addEventListener("gap", (msg) => console.info("event stream gap:", msg.data));
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

// showInfo shows the server's notice (say, that a scripted model answers).
async function showInfo() {
  try {
    const resp = await fetch("/api/info");
    if (!resp.ok) return;
    const { notice } = await resp.json();
    const box = document.getElementById("notice");
    box.textContent = notice || "";
    box.hidden = !notice;
  } catch (err) {
    console.info("no notice:", err);
  } finally {
    document.body.dataset.info = "loaded";
  }
}

showInfo();
connect();

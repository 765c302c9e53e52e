package kit

import (
	"sort"
	"sync"

	"github.com/agentloop/agentloop/providers"
)

// history keeps every state a streamed message's blocks passed through, so
// that an event can name the message as it stood (a partial) in O(1) and
// the message be put together only when asked for. The Builder's goroutine
// records; any goroutine may read.
type history struct {
	header providers.AssistantMessage // the pending header, fixed for the stream
	mu     sync.RWMutex
	now    int32 // events recorded so far
	blocks []blockHistory
	refs   []partial // where the next events' partials go (refChunk at a time)
}

// refChunk is how many events' partials one allocation holds: an event
// carries a pointer into a chunk (a PartialRef costs no allocation of its
// own).
const refChunk = 64

// blockHistory is one block's states. A text or thinking block only grows,
// so its states are lengths of its latest text (marks), and its signature
// shows from the event that recorded it; a tool call's states are kept
// whole.
type blockHistory struct {
	kind     providers.StreamEventType
	text     string
	marks    []mark
	sig      string
	sigAt    int32
	redacted bool
	calls    []callState
}

// mark says the block's text was n bytes long from event at on.
type mark struct{ at, n int32 }

// callState is a tool call as it was from event at on.
type callState struct {
	at   int32
	call providers.ToolCall
}

// partial names the message at one event: its first n blocks, each as it
// was at event at. It is the providers.PartialRef of a block event.
type partial struct {
	h  *history
	at int32
	n  int32
}

// record notes a new event, at which the block at index (if there is one)
// has its current content, and returns the event's partial.
func (h *history) record(blocks []*block, index int) *partial {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now++
	for len(h.blocks) < len(blocks) {
		h.blocks = append(h.blocks, blockHistory{kind: blocks[len(h.blocks)].kind})
	}
	if index >= 0 && index < len(blocks) {
		h.blocks[index].record(h.now, blocks[index])
	}
	if len(h.refs) == cap(h.refs) {
		h.refs = make([]partial, 0, refChunk)
	}
	h.refs = append(h.refs, partial{h: h, at: h.now, n: int32(len(blocks))})
	return &h.refs[len(h.refs)-1]
}

func (bh *blockHistory) record(at int32, bl *block) {
	if bl.kind == providers.StreamToolCallStart {
		bh.calls = append(bh.calls, callState{at: at, call: bl.current().(providers.ToolCall)})
		return
	}
	bh.text = bl.text.String()
	if n := int32(len(bh.text)); len(bh.marks) == 0 || bh.marks[len(bh.marks)-1].n != n {
		bh.marks = append(bh.marks, mark{at: at, n: n})
	}
	if bl.sig != bh.sig {
		bh.sig, bh.sigAt, bh.redacted = bl.sig, at, bl.redacted
	}
}

// PartialMessage puts the partial message together.
func (p *partial) PartialMessage() *providers.AssistantMessage {
	h := p.h
	m := new(providers.AssistantMessage)
	*m = h.header
	m.StopReason = providers.StopReasonPending
	m.Content = make([]providers.Content, p.n)
	h.mu.RLock()
	defer h.mu.RUnlock()
	for i := range m.Content {
		m.Content[i] = h.blocks[i].at(p.at)
	}
	return m
}

// at is the block's content as it was at event at.
func (bh *blockHistory) at(at int32) providers.Content {
	if bh.kind == providers.StreamToolCallStart {
		cs := bh.calls
		i := sort.Search(len(cs), func(j int) bool { return cs[j].at > at }) - 1
		if i < 0 {
			return providers.ToolCall{Arguments: map[string]any{}} // not reached: a call is recorded when it starts
		}
		return cs[i].call
	}
	ms := bh.marks
	text := ""
	if i := sort.Search(len(ms), func(j int) bool { return ms[j].at > at }) - 1; i >= 0 {
		text = bh.text[:ms[i].n]
	}
	signed := bh.sig != "" && bh.sigAt <= at
	if bh.kind == providers.StreamThinkingStart {
		th := providers.Thinking{Thinking: text}
		if signed {
			th.Signature, th.Redacted = bh.sig, bh.redacted
		}
		return th
	}
	t := providers.Text{Text: text}
	if signed {
		t.Signature = bh.sig
	}
	return t
}

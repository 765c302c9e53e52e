package anthropic

import (
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
)

// turn keeps one response's content blocks as the API wants them sent back
// when the server pauses its turn (pause_turn): every block, the server's
// own tools' blocks included, with its deltas applied. Deltas are appended
// to builders and each block is put together once, at the end, so the
// whole response costs time and memory linear in its size (the SDK's
// Message.Accumulate concatenates strings on every delta, quadratic in a
// block's length).
type turn struct {
	blocks []*turnBlock
	index  map[int64]*turnBlock // by the response's block index
}

// turnBlock is one content block: the object its content_block_start
// carried, and what its deltas added to its fields.
type turnBlock struct {
	start                     string
	text, thinking, signature strings.Builder
	input                     strings.Builder
	hasInput                  bool
	citations                 []json.RawMessage
}

func (t *turn) reset() {
	t.blocks, t.index = nil, map[int64]*turnBlock{}
}

// event applies one event of the response.
func (t *turn) event(ev sdk.MessageStreamEventUnion) {
	switch ev.Type {
	case "content_block_start":
		if _, dup := t.index[ev.Index]; dup {
			return // the first start of an index stands
		}
		b := &turnBlock{start: ev.ContentBlock.RawJSON()}
		t.blocks = append(t.blocks, b)
		t.index[ev.Index] = b
	case "content_block_delta":
		b := t.index[ev.Index]
		if b == nil {
			return
		}
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			b.text.WriteString(d.Text)
		case "thinking_delta":
			b.thinking.WriteString(d.Thinking)
		case "signature_delta":
			b.signature.WriteString(d.Signature)
		case "input_json_delta":
			b.hasInput = b.hasInput || d.PartialJSON != ""
			b.input.WriteString(d.PartialJSON)
		case "citations_delta":
			if raw := d.Citation.RawJSON(); raw != "" {
				b.citations = append(b.citations, json.RawMessage(raw))
			}
		}
	}
}

// message is the assistant message that sends the response back.
func (t *turn) message() sdk.MessageParam {
	content := make([]sdk.ContentBlockParamUnion, 0, len(t.blocks))
	for _, b := range t.blocks {
		if cb, ok := b.block(); ok {
			content = append(content, cb.ToParam())
		}
	}
	return sdk.NewAssistantMessage(content...)
}

// block puts the block together: the start object with the deltas
// appended to its text, thinking, signature and citations, and its input
// replaced by the streamed one ({} when that never became JSON, as the
// SDK's accumulator does).
func (b *turnBlock) block() (sdk.ContentBlockUnion, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal([]byte(b.start), &fields) != nil || fields == nil {
		return sdk.ContentBlockUnion{}, false
	}
	appendString := func(name string, more *strings.Builder) {
		if more.Len() == 0 {
			return
		}
		var s string
		_ = json.Unmarshal(fields[name], &s)
		fields[name], _ = json.Marshal(s + more.String())
	}
	appendString("text", &b.text)
	appendString("thinking", &b.thinking)
	appendString("signature", &b.signature)
	if b.hasInput {
		in := b.input.String()
		if !json.Valid([]byte(in)) {
			in = "{}"
		}
		fields["input"] = json.RawMessage(in)
	}
	if len(b.citations) > 0 {
		var all []json.RawMessage
		_ = json.Unmarshal(fields["citations"], &all)
		fields["citations"], _ = json.Marshal(append(all, b.citations...))
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		return sdk.ContentBlockUnion{}, false
	}
	var cb sdk.ContentBlockUnion
	if cb.UnmarshalJSON(raw) != nil {
		return sdk.ContentBlockUnion{}, false
	}
	return cb, true
}

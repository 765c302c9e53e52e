package providers

import (
	"encoding/json"
	"fmt"
)

// Content is one block of a message's content: [Text], [Thinking], [Image]
// or [ToolCall]. The set is closed; a type switch over those four is
// exhaustive.
type Content interface {
	// ContentType reports the block's JSON type name: "text", "thinking",
	// "image" or "toolCall".
	ContentType() string
	isContent()
}

// Text is a block of plain text.
type Text struct {
	Text string `json:"text"`
	// Signature is opaque provider data that rode on the text (Gemini's
	// thought signature, the Responses API's message id and phase), sent
	// back unchanged to the model that produced it.
	Signature string `json:"textSignature,omitempty"`
}

// Thinking is a block of model reasoning.
type Thinking struct {
	Thinking string `json:"thinking"`
	// Signature is opaque data the provider needs back on the next request
	// (Anthropic's signature, Gemini's thought signature, the Responses
	// API's reasoning item with its encrypted content); for redacted
	// thinking it holds the encrypted payload. Only the model that produced
	// it gets it back (see Target).
	Signature string `json:"thinkingSignature,omitempty"`
	// Redacted marks reasoning the provider sent encrypted only
	// (Anthropic's redacted_thinking): Thinking is empty, Signature holds it.
	Redacted bool `json:"redacted,omitempty"`
}

// Image is an inline image.
type Image struct {
	// Data is the image, base64-encoded.
	Data     string `json:"data"`
	MIMEType string `json:"mimeType"`
}

// ToolCall is the model's request to run a tool.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the parsed JSON object the model produced. It belongs to
	// the transcript: the loop hands tools and hooks deep copies, never this
	// map.
	Arguments map[string]any `json:"arguments"`
	// RawArguments is the argument text as the provider streamed it, when
	// the provider streamed one.
	RawArguments string `json:"rawArguments,omitempty"`
	// Incomplete reports that the streamed argument text never became
	// complete JSON, so Arguments is a best-effort salvage. The loop refuses
	// to run such a call, as it refuses calls from a truncated response.
	Incomplete bool `json:"incomplete,omitempty"`
	// ArgumentBytes is how many bytes of argument text the model sent, when
	// the provider kept less of it than that (RequestOptions.MaxArgumentBytes);
	// 0 otherwise. The loop refuses such a call, saying how large it was.
	ArgumentBytes int `json:"argumentBytes,omitempty"`
	// Signature is opaque provider data that rode on the call (Gemini's
	// thought signature, the Responses API's item id), sent back unchanged
	// to the model that produced it.
	Signature string `json:"thoughtSignature,omitempty"`
}

// ContentType reports the block's JSON type name.
func (Text) ContentType() string { return "text" }

// ContentType reports the block's JSON type name.
func (Thinking) ContentType() string { return "thinking" }

// ContentType reports the block's JSON type name.
func (Image) ContentType() string { return "image" }

// ContentType reports the block's JSON type name.
func (ToolCall) ContentType() string { return "toolCall" }

func (Text) isContent()     {}
func (Thinking) isContent() {}
func (Image) isContent()    {}
func (ToolCall) isContent() {}

// MarshalJSON encodes the block with its "type" field.
func (t Text) MarshalJSON() ([]byte, error) {
	type plain Text
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"text", plain(t)})
}

// MarshalJSON encodes the block with its "type" field.
func (t Thinking) MarshalJSON() ([]byte, error) {
	type plain Thinking
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"thinking", plain(t)})
}

// MarshalJSON encodes the block with its "type" field.
func (i Image) MarshalJSON() ([]byte, error) {
	type plain Image
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"image", plain(i)})
}

// MarshalJSON encodes the block with its "type" field. Nil arguments encode
// as an empty object, never as null.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	type plain ToolCall
	if c.Arguments == nil {
		c.Arguments = map[string]any{}
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"toolCall", plain(c)})
}

// UnmarshalContent decodes one content block, choosing its Go type by the
// "type" field.
func UnmarshalContent(data []byte) (Content, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("content block: %w", err)
	}
	switch head.Type {
	case "text":
		var b Text
		err := json.Unmarshal(data, &b)
		return b, wrapBlock(err, head.Type)
	case "thinking":
		var b Thinking
		err := json.Unmarshal(data, &b)
		return b, wrapBlock(err, head.Type)
	case "image":
		var b Image
		err := json.Unmarshal(data, &b)
		return b, wrapBlock(err, head.Type)
	case "toolCall":
		var b ToolCall
		err := json.Unmarshal(data, &b)
		if b.Arguments == nil {
			b.Arguments = map[string]any{}
		}
		return b, wrapBlock(err, head.Type)
	default:
		return nil, fmt.Errorf("content block: unknown type %q", head.Type)
	}
}

func wrapBlock(err error, typ string) error {
	if err != nil {
		return fmt.Errorf("%s block: %w", typ, err)
	}
	return nil
}

// unmarshalBlocks decodes a JSON array of content blocks; missing or null
// content is no blocks.
func unmarshalBlocks(data []byte) ([]Content, error) {
	if len(data) == 0 || string(data) == "null" {
		return nil, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	if len(raws) == 0 {
		return nil, nil
	}
	out := make([]Content, 0, len(raws))
	for _, r := range raws {
		c, err := UnmarshalContent(r)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// TextOf returns the concatenation of the text blocks in content.
func TextOf(content []Content) string {
	switch len(content) {
	case 0:
		return ""
	case 1:
		if t, ok := content[0].(Text); ok {
			return t.Text
		}
		return ""
	}
	var n int
	for _, c := range content {
		if t, ok := c.(Text); ok {
			n += len(t.Text)
		}
	}
	b := make([]byte, 0, n)
	for _, c := range content {
		if t, ok := c.(Text); ok {
			b = append(b, t.Text...)
		}
	}
	return string(b)
}

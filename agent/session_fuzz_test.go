package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentloop/agentloop/providers"
)

// FuzzReadSession: loading arbitrary bytes never panics or changes its
// input; whatever loads saves and loads again to the same messages; an
// error names a line within the input.
func FuzzReadSession(f *testing.F) {
	var buf bytes.Buffer
	_ = WriteSession(&buf, []providers.Message{
		providers.NewUserText("hi"),
		providers.AssistantMessage{Content: []providers.Content{providers.Text{Text: "x"}, providers.ToolCall{ID: "c", Name: "t", Arguments: map[string]any{"a": 1.0}}}, StopReason: providers.StopReasonToolUse},
		providers.ToolResultMessage{ToolCallID: "c", ToolName: "t", Content: []providers.Content{providers.Text{Text: "ok"}}},
	})
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()-7])
	f.Add([]byte("{\"role\":\"custom\",\"x\":1}\n\n{\"role\":\"user\",\"content\":\"s\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		msgs, err := ReadSession(bytes.NewReader(data))
		if !bytes.Equal(in, data) {
			t.Fatal("input mutated")
		}
		var se *SessionError
		if err != nil && (!errors.As(err, &se) || se.Line < 1 || se.Line > bytes.Count(data, []byte("\n"))+1) {
			t.Fatalf("error %v", err)
		}
		var out bytes.Buffer
		if err := WriteSession(&out, msgs); err != nil {
			t.Fatalf("loaded messages do not save: %v", err)
		}
		again, err := ReadSession(&out)
		if err != nil || len(again) != len(msgs) {
			t.Fatalf("reload: %d vs %d messages, %v", len(again), len(msgs), err)
		}
		for i := range msgs {
			a, _ := json.Marshal(msgs[i])
			b, _ := json.Marshal(again[i])
			if !bytes.Equal(a, b) {
				t.Fatalf("message %d changed: %s -> %s", i, a, b)
			}
		}
	})
}

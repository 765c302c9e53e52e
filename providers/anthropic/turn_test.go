package anthropic

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentloop/agentloop/internal/harness/recorded"
)

// events decodes the data lines of a Messages API stream.
func events(t *testing.T, body string) []sdk.MessageStreamEventUnion {
	t.Helper()
	var out []sdk.MessageStreamEventUnion
	for line := range strings.Lines(body) {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:")
		if !ok {
			continue
		}
		var ev sdk.MessageStreamEventUnion
		if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &ev); err != nil {
			t.Fatalf("%v: %.80s", err, data)
		}
		out = append(out, ev)
	}
	return out
}

// TestTurnMatchesSDK: the message sent back after pause_turn is the one
// the SDK's accumulator builds (Message.Accumulate, then ToParam), for
// every recorded stream and for shapes no recording has: citations
// streamed onto a text block, a server tool's input in pieces, a cut-off
// input, a signature in pieces, text on the start event.
func TestTurnMatchesSDK(t *testing.T) {
	bodies := map[string]string{
		"synthetic": recorded.SSE(msgStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"a","signature":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"b <&> c"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2l"}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"n"}}`,
			blockStop,
			`{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`,
			`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\": "}}`,
			`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"go\"}"}}`,
			`{"type":"content_block_stop","index":1}`,
			`{"type":"content_block_start","index":2,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","title":"Go","url":"https://go.dev/","encrypted_content":"EqQ","page_age":null}]}}`,
			`{"type":"content_block_stop","index":2}`,
			`{"type":"content_block_start","index":3,"content_block":{"type":"text","text":"Start ","citations":null}}`,
			`{"type":"content_block_delta","index":3,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","cited_text":"Go is","url":"https://go.dev/","title":"Go","encrypted_index":"Eo8"}}}`,
			`{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"Go is a language."}}`,
			`{"type":"content_block_stop","index":3}`,
			`{"type":"content_block_start","index":4,"content_block":{"type":"redacted_thinking","data":"opaque"}}`,
			`{"type":"content_block_stop","index":4}`,
			`{"type":"content_block_start","index":5,"content_block":{"type":"tool_use","id":"toolu_1","name":"write","input":{}}}`,
			`{"type":"content_block_delta","index":5,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a"}}`,
			`{"type":"content_block_stop","index":5}`,
			`{"type":"content_block_start","index":6,"content_block":{"type":"tool_use","id":"toolu_2","name":"list","input":{}}}`,
			`{"type":"content_block_stop","index":6}`,
			stopWith("pause_turn", 9), msgStop),
	}
	for _, rec := range recorded.NativeRecordings(t, "anthropic") {
		bodies[rec.Name] = string(rec.Body)
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			var acc sdk.Message
			var tr turn
			tr.reset()
			for _, ev := range events(t, body) {
				if err := acc.Accumulate(ev); err != nil {
					t.Fatal(err)
				}
				tr.event(ev)
			}
			if got, want := asJSON(t, tr.message()), asJSON(t, acc.ToParam()); !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Fatalf("sent back\n%s\nthe SDK's\n%s", g, w)
			}
		})
	}
}

func asJSON(t *testing.T, m sdk.MessageParam) any {
	t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/providers"
)

// TestQuickstartOffline plays the scripted conversation and checks what
// the example advertises: the policy blocks the note outside ./notes, the
// invalid weather call is refused with the validation listing and then
// runs with corrected arguments, results stay in call order, and the final
// answer arrives.
func TestQuickstartOffline(t *testing.T) {
	msgs, err := run(context.Background(), io.Discard, "offline")
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		isError bool
		text    string // a prefix of the result's text
	}
	want := map[string]outcome{
		"call_1": {false, "Oslo: 4°C"},
		"call_2": {false, ""},
		"call_3": {true, `Validation failed for tool "weather"`},
		"call_4": {true, "notes must stay inside ./notes; /etc/motd is outside"},
		"call_5": {false, "Bergen: 7°C, light rain"},
		"call_6": {false, "saved 22 bytes to notes/weather.txt"},
	}
	var order []string
	for _, m := range msgs {
		tr, ok := m.(providers.ToolResultMessage)
		if !ok {
			continue
		}
		order = append(order, tr.ToolCallID)
		w := want[tr.ToolCallID]
		if tr.IsError != w.isError || !strings.HasPrefix(tr.Text(), w.text) {
			t.Errorf("%s: error=%v %q, want error=%v and a text starting %q", tr.ToolCallID, tr.IsError, tr.Text(), w.isError, w.text)
		}
	}
	if got := strings.Join(order, ","); got != "call_1,call_2,call_3,call_4,call_5,call_6" {
		t.Errorf("results in the order %s", got)
	}
	for _, field := range []string{"city", "must have required propert", "unit"} {
		if res := resultText(msgs, "call_3"); !strings.Contains(res, field) {
			t.Errorf("the validation listing does not mention %q:\n%s", field, res)
		}
	}
	final, ok := msgs[len(msgs)-1].(providers.AssistantMessage)
	if !ok || final.StopReason != providers.StopReasonStop || !strings.Contains(final.Text(), "Oslo is 4°C and Bergen 7°C") {
		t.Fatalf("final message %#v", msgs[len(msgs)-1])
	}
}

func resultText(msgs []providers.Message, id string) string {
	for _, m := range msgs {
		if tr, ok := m.(providers.ToolResultMessage); ok && tr.ToolCallID == id {
			return tr.Text()
		}
	}
	return ""
}

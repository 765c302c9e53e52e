package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
)

// TestAnswerErrorPointsToToolMode: a native Ask whose answers never fit
// (prose, JSON of another shape, as from a server that ignores
// response_format) fails with an error naming AskTool; a tool-mode Ask and
// a native answer cut off at the token limit do not point there.
func TestAnswerErrorPointsToToolMode(t *testing.T) {
	tests := []struct {
		name     string
		mode     AskMode
		reply    providers.AssistantMessage
		wantHint bool
	}{
		{"native, prose", AskNative, answerText("The invoice is INV-7, paid."), true},
		{"native, JSON of its own shape", AskNative, answerText(`{"invoice":{"id":"INV-7"}}`), true},
		{"native, fenced prose", AskNative, answerText("```\nINV-7\n```"), true},
		{"native, cut off", AskNative, cut(`{"number":"INV-7"`), false},
		{"tool, prose", AskTool, answerText("The invoice is INV-7, paid."), false},
		{"auto on a structured-output provider, prose", AskAuto, answerText("INV-7."), true},
		{"auto on faux, prose", AskAuto, answerText("INV-7."), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p providers.Provider = faux.New(tt.reply, tt.reply)
			want := tt.mode
			switch {
			case strings.HasPrefix(tt.name, "auto on a structured"):
				p, want = structured{p.(*faux.Provider)}, AskNative
			case tt.mode == AskAuto:
				want = AskTool
			}
			_, err := AskWith[invoice](context.Background(), newAgent(p), "Which invoice?", AskOptions{Mode: tt.mode, MaxAttempts: 2})
			ae, ok := errors.AsType[*AnswerError](err)
			if !ok {
				t.Fatalf("err = %v, want an *AnswerError", err)
			}
			if ae.Mode != want {
				t.Errorf("Mode = %v, want %v", ae.Mode, want)
			}
			hint := strings.Contains(err.Error(), "agent.AskOptions{Mode: agent.AskTool}") && strings.Contains(err.Error(), "response_format")
			if hint != tt.wantHint {
				t.Errorf("points to the tool mode: %v, want %v:\n%s", hint, tt.wantHint, err)
			}
			if !strings.HasPrefix(err.Error(), "agent: no answer fit after 2 attempts") || !strings.HasSuffix(err.Error(), ae.Problem) {
				t.Errorf("error text %q", err)
			}
		})
	}
}

// structured is the scripted model claiming structured output, as an
// OpenAI-compatible server does whether or not it honours response_format.
type structured struct{ *faux.Provider }

func (structured) StructuredOutput() bool { return true }

package agent

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentloop/agentloop/providers"
)

// TestAskTexts: the texts the model reads while Ask waits, word for word.
func TestAskTexts(t *testing.T) {
	tests := []struct{ got, want string }{
		{AnswerDescription, "Give the final answer. If it is refused, correct what the refusal names and give it again."},
		{AnswerAcceptedText, "Answer accepted."},
		{NativeAnswerPrompt, "When you have the answer, reply with it as JSON that fits the schema given, and nothing else."},
		{AnswerCutOffText, "Your answer was cut off at the output token limit. Answer again, more briefly, with JSON that fits the schema."},
		{AnswerNotObjectProblem, "the answer is not a complete JSON object"},
		{AnswerCutOffProblem, "the answer was cut off at the output token limit"},
		{toolAnswerPrompt("submit"), "When you have the answer, give it by calling the submit tool."},
		{proseAnswerText("submit"), "Give your final answer by calling the submit tool."},
		{proseAnswerProblem("submit"), "the answer came as prose, not through the submit tool"},
		{misfitAnswerText("LISTING"), "Your answer does not fit the schema.\n\nLISTING\n\nAnswer again with JSON only, correcting what is listed."},
		{oversizedAnswerProblem(9000, 4096), "the answer is 9000 bytes, more than the limit of 4096 bytes"},
		{oversizedAnswerText(9000, 4096, "EXCERPT"), "Your answer is 9000 bytes, more than the limit of 4096 bytes. It was:\n\nEXCERPT\n\n" +
			"Answer again, more briefly, with JSON that fits the schema."},
		{ExcerptMarker(123), "\n[... 123 bytes left out ...]\n"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q\nwant %q", tt.got, tt.want)
		}
	}
	if MaxQuotedAnswerBytes != 8192 {
		t.Errorf("MaxQuotedAnswerBytes = %d", MaxQuotedAnswerBytes)
	}
}

// TestExcerpt: head and tail, at most max bytes of the text, cut at rune
// boundaries, the marker counting what was left out; the excerpt of text
// in several blocks is that of their concatenation.
func TestExcerpt(t *testing.T) {
	tests := []struct {
		name string
		s    string
		max  int
		want string
	}{
		{"fits", "abcdef", 6, "abcdef"},
		{"ascii", "abcdefghij", 4, "ab" + ExcerptMarker(6) + "ij"},
		{"odd max", "abcdefghij", 5, "ab" + ExcerptMarker(5) + "hij"},
		{"runes", "ééééé", 5, "é" + ExcerptMarker(6) + "é"},   // 10 bytes; 2 each
		{"runes 3", "€€€€€", 7, "€" + ExcerptMarker(9) + "€"}, // 15 bytes; 3 each
		{"emoji", "😀😀😀", 6, ExcerptMarker(12)},                // 12 bytes; 4 each
		{"zero", "abc", 0, ExcerptMarker(3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := excerpt(tt.s, tt.max)
			if got != tt.want {
				t.Fatalf("excerpt(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("invalid UTF-8: %q", got)
			}
			// The same text in blocks of every size.
			for size := 1; size <= len(tt.s); size++ {
				var blocks []providers.Content
				for i := 0; i < len(tt.s); i += size {
					blocks = append(blocks, providers.Thinking{Thinking: "not text"}, providers.Text{Text: tt.s[i:min(i+size, len(tt.s))]})
				}
				if got := textExcerpt(blocks, len(tt.s), tt.max); got != tt.want {
					t.Fatalf("blocks of %d: %q, want %q", size, got, tt.want)
				}
			}
		})
	}
	long := strings.Repeat("x", 1<<20)
	if got := excerpt(long, MaxQuotedAnswerBytes); len(got) > MaxQuotedAnswerBytes+len(ExcerptMarker(len(long))) {
		t.Fatalf("excerpt of %d bytes", len(got))
	}
}

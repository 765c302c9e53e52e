package mcp

import "testing"

// TestTexts: the texts the model reads, word for word.
func TestTexts(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{LostText("files"), "the connection to files was lost while the call was running; it may or may not have run"},
		{RefusedText("files", "unknown tool"), "files refused the call: unknown tool"},
		{TooDeepText("files", 900), "the call ran on files, but its result nests more than 900 levels deep and was dropped"},
		{TooLargeText("files", 209715273, 16777216), "the call ran on files, but its result (209715273 bytes) is larger than the 16777216 bytes allowed and was dropped"},
	} {
		if tt.got != tt.want {
			t.Errorf("%q, want %q", tt.got, tt.want)
		}
	}
}

package quote

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExcerpt(t *testing.T) {
	tests := []struct {
		s    string
		max  int
		want string
	}{
		{"abcdef", 6, "abcdef"},
		{"abcdefghij", 4, "ab\n[... 6 bytes left out ...]\nij"},
		{"abcdefghij", 5, "ab\n[... 5 bytes left out ...]\nhij"},
		{"ééééé", 5, "é\n[... 6 bytes left out ...]\né"},
		{"😀😀😀", 6, "\n[... 12 bytes left out ...]\n"},
		{"abc", 0, "\n[... 3 bytes left out ...]\n"},
	}
	for _, tt := range tests {
		if got := Excerpt(tt.s, tt.max); got != tt.want || !utf8.ValidString(got) {
			t.Errorf("Excerpt(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
		}
	}
	s := strings.Repeat("é", 1<<19)
	if got := Excerpt(s, 1001); len(got) > 1001+len(Marker(len(s))) || !strings.HasPrefix(got, "éé") || !strings.HasSuffix(got, "éé") {
		t.Errorf("a long excerpt: %d bytes", len(got))
	}
}

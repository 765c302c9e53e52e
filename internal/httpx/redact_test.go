package httpx

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestRedact: the key goes in every form Redact reads, however it is
// escaped or cased, whole or in part; what is not the key stays.
func TestRedact(t *testing.T) {
	const key = "sk-proj-Abc123Def456Ghi789"
	b64 := base64.StdEncoding.EncodeToString([]byte("u:" + key))
	tests := []struct{ name, text, want string }{
		{"as is", "bad key " + key + "!", "bad key [redacted]!"},
		{"twice", key + " and " + key, "[redacted] and [redacted]"},
		{"one JSON escape", `bad key \u0073k-proj-Abc123Def456Ghi789`, "bad key [redacted]"},
		{"JSON escapes in upper case", `\u0073\u006B-proj-Abc123Def456Ghi789`, "[redacted]"},
		{"escaped twice", `\\u0073k-proj-Abc123Def456Ghi789`, "[redacted]"},
		{"a surrogate pair next to it", `\ud83d\ude00 sk-proj-Abc123Def456Ghi789`, `\ud83d\ude00 [redacted]`},
		{"URL-escaped", "k=%73%6b%2Dproj-Abc123Def456Ghi789&x=1", "k=[redacted]&x=1"},
		{"URL-escaped twice", "k=%2573k-proj-Abc123Def456Ghi789", "k=[redacted]"},
		{"\\x-escaped", `\x73k-proj-Abc123Def456Ghi789`, "[redacted]"},
		{"HTML references", "&#115;&#x6b;-proj-Abc123Def456Ghi789", "[redacted]"},
		{"upper case", "SK-PROJ-ABC123DEF456GHI789", "[redacted]"},
		{"8 characters of it", "ends in 456Ghi78.", "ends in [redacted]."},
		{"7 characters of it", "ends in 56Ghi78.", "ends in 56Ghi78."},
		{"hex", "6b2d70726f6a2d", "[redacted]"},
		{"base64", "Basic " + b64, "Basic [redacted]"},
		{"base64 URL alphabet", "Basic " + strings.NewReplacer("+", "-", "/", "_").Replace(b64), "Basic [redacted]"},
		{"not the key", `HTTP 401: invalid \u0061pi key, see https://x.test/a+b%20c`, `HTTP 401: invalid \u0061pi key, see https://x.test/a+b%20c`},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.text, key)
			// base64 leaves a character or two at each end that mix the
			// key's bits with their neighbours'.
			if tt.name == "base64" || tt.name == "base64 URL alphabet" {
				if !strings.Contains(got, "[redacted]") || len(got) > len(tt.want)+6 {
					t.Fatalf("got %q", got)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
	// A key with characters that escape: the run that mixes a + and an
	// escape goes too.
	if got := Redact(`aaaa+bb\/cccc`, "aaaa+bb/cccc"); got != "[redacted]" {
		t.Fatalf("a key with + and /: %q", got)
	}
	if got := Redact("abc "+key, "abc"); got != "abc "+key {
		t.Fatalf("a key of 3 bytes: %q", got)
	}
	if got := Redact("the word test, tested", "test"); got != "the word [redacted], [redacted]ed" {
		t.Fatalf("a key of 4 bytes: %q", got)
	}
}

// TestQuote: a long text is cut to MaxQuotedBytes, marker included, on a
// character's boundary; a short one is left whole; quoting twice changes
// nothing.
func TestQuote(t *testing.T) {
	for _, n := range []int{0, 10, MaxQuotedBytes, MaxQuotedBytes + 1, 3 << 20} {
		text := strings.Repeat("é", n/2+1)[:n]
		got := Quote(text, "sk-xxxxxxxxxxxx")
		switch {
		case len(got) > MaxQuotedBytes:
			t.Fatalf("%d bytes: quoted to %d", n, len(got))
		case n <= MaxQuotedBytes && got != strings.ToValidUTF8(text, "\uFFFD") && got != text:
			t.Fatalf("%d bytes: changed to %q", n, got)
		case n > MaxQuotedBytes && !strings.HasSuffix(got, " [... cut from "+itoa(n)+" bytes]"):
			t.Fatalf("%d bytes: no marker in %q", n, got[len(got)-40:])
		case Quote(got, "sk-xxxxxxxxxxxx") != got:
			t.Fatalf("%d bytes: quoting twice changed it", n)
		}
		if n > MaxQuotedBytes && !strings.HasPrefix(got, "éé") || strings.Contains(got, "\uFFFD") {
			t.Fatalf("%d bytes: cut inside a character", n)
		}
	}
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}

// FuzzQuote: whatever the text and the key, Quote returns at most
// MaxQuotedBytes with no 8 characters of the key in a row (in any case),
// and quoting twice changes nothing.
func FuzzQuote(f *testing.F) {
	f.Add(`bad \u0073k-proj-Abc123Def456 %2573k&#115;\x73`, "sk-proj-Abc123Def456")
	f.Add(strings.Repeat("ab", 3000)+"\\ud83d\\u", "abababab")
	f.Add("&#x;&#;%\\", "key-1234")
	f.Fuzz(func(t *testing.T, text, key string) {
		got := Quote(text, key)
		if len(got) > MaxQuotedBytes {
			t.Fatalf("%d bytes", len(got))
		}
		if Quote(got, key) != got {
			t.Fatalf("quoting twice changed %q", got)
		}
		low, k := lowerASCII(got), lowerASCII(key) // strings.ToLower would rewrite invalid UTF-8
		if len(key) < 4 {
			return
		}
		n := min(8, len(k))
		for i := 0; i+n <= len(k); i++ {
			if strings.Contains(low, k[i:i+n]) && !strings.Contains(strings.ToLower("[redacted] [... cut from bytes]0123456789"), k[i:i+n]) {
				t.Fatalf("%q carries %q of the key", got, k[i:i+n])
			}
		}
	})
}

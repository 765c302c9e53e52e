package natsbus

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTrim: an event over the limit comes out within it, still JSON of the
// same shape, its short strings whole and its long ones cut on a character
// boundary and marked; one that cannot fit is refused.
func TestTrim(t *testing.T) {
	long := strings.Repeat("ab€", 5000) // 25,000 bytes
	tests := []struct {
		name  string
		in    string
		limit int
		ok    bool
	}{
		{"one long string", `{"type":"message_end","message":{"content":[{"type":"text","text":"` + long + `"}]}}`, 2000, true},
		{"several, nested", `{"type":"x","a":["` + long + `","short",{"b":"` + long[:9000] + `"}],"n":12345678901234567890}`, 3000, true},
		{"type and path kept whole", `{"type":"tool_execution_update","v":2,"seq":4,"sub":2,"path":["` + long[:600] + `","c2"],"toolCallId":"` + long[:600] + `","partialResult":{"content":[{"type":"text","text":"` + long + `"}]}}`, 2000, true},
		{"structure too large", `{"type":"x","a":[` + strings.Repeat(`"",`, 2000) + `""]}`, 1000, false},
		{"not JSON", `{"type":`, 1000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ok := trim([]byte(tt.in), tt.limit)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			var v map[string]any
			if len(out) > tt.limit || json.Unmarshal(out, &v) != nil || v["type"] == nil {
				t.Fatalf("%d bytes, limit %d: %.200s", len(out), tt.limit, out)
			}
			if !strings.Contains(string(out), "bytes cut: the event was over the bus's size limit]") || !utf8.Valid(out) {
				t.Fatalf("no marker, or broken text: %.200s", out)
			}
			if strings.Contains(tt.in, `"path"`) && (v["type"] != "tool_execution_update" || !strings.Contains(string(out), `"path":["`+long[:600]+`","c2"]`)) {
				t.Fatalf("the type or path was cut: %.300s", out)
			}
			if strings.Contains(tt.in, `"short"`) && (!strings.Contains(string(out), `"short"`) || !strings.Contains(string(out), "12345678901234567890")) {
				t.Fatalf("short strings or numbers changed: %.300s", out)
			}
		})
	}
}

package mcp

import (
	"cmp"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
)

// TestBoundedReader: lines within the bound pass as they are; a line
// past it becomes a small error answer for its own top-level id (not an
// "id" nested in its result, not one spelled inside a string), is
// dropped when it is a notification or a request, and ends the stream
// when it answers nothing.
func TestBoundedReader(t *testing.T) {
	pad := strings.Repeat("p", 200)
	standIn := func(id string) string { // SIZE: the whole line's
		return `{"error":{"code":-32099,"data":{"size":SIZE},"message":"agentloop: the answer was larger than Limits.MaxMessageBytes"},"id":` + id + `,"jsonrpc":"2.0"}` + "\n"
	}
	tests := []struct {
		name, in, want string
		err            bool
		max            int // 100 when 0
	}{
		{"small lines pass", "{\"id\":1}\n{\"id\":2}\n", "{\"id\":1}\n{\"id\":2}\n", false, 0},
		{"id last", `{"result":{"text":"` + pad + `"},"jsonrpc":"2.0","id":7}` + "\n", standIn("7"), false, 0},
		{"id first", `{"jsonrpc":"2.0","id":"a\"b","result":"` + pad + `"}` + "\n", standIn(`"a\"b"`), false, 0},
		{"nested id is not the id", `{"result":{"id":99,"t":"` + pad + `"},"id":3}` + "\n", standIn("3"), false, 0},
		{"id spelled in a string", `{"result":"\"id\":5 ` + pad + `","id":4}` + "\n", standIn("4"), false, 0},
		{"an error answer", `{"id":-2,"error":{"message":"` + pad + `"}}` + "\n", standIn("-2"), false, 0},
		{"notification dropped", `{"method":"notifications/message","params":{"data":"` + pad + `"}}` + "\n{\"id\":1}\n", "{\"id\":1}\n", false, 0},
		{"request dropped", `{"id":5,"method":"sampling/createMessage","params":"` + pad + `"}` + "\n", "", false, 0},
		{"no id", `{"result":"` + pad + `"}` + "\n", "", true, 0},
		{"object id", `{"id":{"a":1},"result":"` + pad + `"}` + "\n", "", true, 0},
		{"batch", `[{"id":1,"result":"` + pad + `"}]` + "\n", "", true, 0},
		{"not json", pad + "\n", "", true, 0},
		{"a page reduced", `{"id":9,"result":{"nextCursor":"c2","tools":[{"name":"a"},{"name":"big","d":"` + pad + `"},{"name":"b"}]}}` + "\n",
			`{"jsonrpc":"2.0","id":9,"result":{"tools":[{"name":"a"},{"name":"big","inputSchema":{"type":"object"},"_meta":{"agentloop/tooLarge":221}},{"name":"b"}],"nextCursor":"c2"}}` + "\n", false, 250},
		{"a page cut", `{"id":9,"result":{"tools":[{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"},{"name":"` + pad + `"}]}}` + "\n",
			`{"jsonrpc":"2.0","id":9,"result":{"tools":[{"name":"a"},{"name":"b"},{"name":"c"}],"_meta":{"agentloop/cut":{"dropped":2,"size":SIZE}}}}` + "\n", false, 0},
		{"two values", `{"id":1,"result":"` + pad + `"} {"id":2}` + "\n", "", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newBoundedReader(strings.NewReader(tt.in), lines, Limits{MaxMessageBytes: cmp.Or(tt.max, 100), MaxToolBytes: 20, MaxTools: 10}, "s", func(string, ...any) {})
			got, err := io.ReadAll(r)
			tt.want = strings.Replace(tt.want, "SIZE", strconv.Itoa(len(tt.in)), 1)
			if string(got) != tt.want || (err != nil) != tt.err {
				t.Fatalf("got %q, %v\nwant %q (error %v)", got, err, tt.want, tt.err)
			}
		})
	}
}

// FuzzBoundedReader: whatever a server sends, the reader does not panic,
// passes lines within the bound unchanged, and gives out no line past it
// (a stand-in is small).
func FuzzBoundedReader(f *testing.F) {
	f.Add(`{"id":1,"result":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`+"\n{}\n", 16)
	f.Add(`{"method":"m","params":{"a":"\"}{"}}`+"\n", 8)
	f.Add(`[1,2,{"id":"\\"}]`, 4)
	f.Fuzz(func(t *testing.T, in string, max int) {
		max = 1 + max&0xff
		got, _ := io.ReadAll(newBoundedReader(strings.NewReader(in), lines, Limits{MaxMessageBytes: max, MaxToolBytes: max, MaxTools: 1 + max%7}, "s", func(string, ...any) {}))
		long := false
		for line := range strings.Lines(in) {
			long = long || len(line) > max
		}
		if !long && string(got) != in {
			t.Fatalf("%q became %q", in, got)
		}
		passed := map[string]bool{}
		for line := range strings.Lines(in) {
			passed[line] = true
		}
		for line := range strings.Lines(string(got)) {
			if passed[line] {
				continue
			}
			if !json.Valid([]byte(line)) { // a stand-in
				t.Fatalf("a stand-in that is not JSON: %q", line)
			}
			if len(line) > max+max/2+300 {
				t.Fatalf("a stand-in of %d bytes for a bound of %d", len(line), max)
			}
		}
	})
}

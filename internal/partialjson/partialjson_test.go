package partialjson

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/jsonnum"
)

// TestSalvage is the table of SPEC Appendix C, plus the repair rules.
func TestSalvage(t *testing.T) {
	tests := []struct {
		in       string
		want     string // JSON of the salvaged value; "null" for nothing
		complete bool
	}{
		{``, `{}`, true},
		{"  \n", `{}`, true},
		{`{"a":"b"}`, `{"a":"b"}`, true},
		{`{"a":"hel`, `{"a":"hel"}`, false},
		{`{"a":12`, `{"a":12}`, false},
		{`{"a":1.`, `null`, false},
		{`{"a":-`, `null`, false},
		{`{"a":1e`, `{"a":1}`, false},
		{`{"a":tr`, `{"a":true}`, false},
		{`{"a":nu`, `{"a":null}`, false},
		{`{"a":f`, `{"a":false}`, false},
		{`{"a":[1,2`, `{"a":[1,2]}`, false},
		{`{"a":{"b":"c"`, `{"a":{"b":"c"}}`, false},
		{`{"ke`, `{}`, false},
		{`{"key"`, `{}`, false},
		{`{"key":`, `{}`, false},
		{`{"a":1,`, `{"a":1}`, false},
		{`{"a":"x\`, `{"a":"x"}`, false},
		{`{"a":"\u00`, `{"a":""}`, false},
		{`{"a":"\u00e9\ud83d\ude00"`, `{"a":"é😀"}`, false},
		{`{"a":"b"} trailing`, `{"a":"b"}`, false},
		{"{\"a\":\"line1\nline2\"}", `{"a":"line1\nline2"}`, true},
		{`{"path":"C:\dir\xyz"}`, `{"path":"C:\\dir\\xyz"}`, true},
		{`{"a":x}`, `null`, false},
		{`[1,2`, `[1,2]`, false},
	}
	for _, tc := range tests {
		v, complete := Parse(tc.in)
		got, _ := json.Marshal(v)
		if string(got) != tc.want || complete != tc.complete {
			t.Errorf("Parse(%q) = %s, %v; want %s, %v", tc.in, got, complete, tc.want, tc.complete)
		}
	}
}

func TestParseObject(t *testing.T) {
	if m, ok := ParseObject(`[1]`); len(m) != 0 || ok {
		t.Errorf("array: %v %v", m, ok)
	}
	if m, ok := ParseObject(`{"a":1`); m["a"] != 1.0 || ok {
		t.Errorf("partial: %v %v", m, ok)
	}
	if m, ok := ParseObject(`{"a":1}`); m["a"] != 1.0 || !ok {
		t.Errorf("complete: %v %v", m, ok)
	}
}

// TestStreamMatchesWhole: feeding fragments of any size gives the same
// final value as parsing the whole text, and previews grow toward it.
func TestStreamMatchesWhole(t *testing.T) {
	whole := `{"path":"src/main.go","edits":[{"old":"fmt.Println(\"hi\")","new":"log.Print(\"é\")"}],"force":true,"n":-12.5e1}`
	want, _ := ParseObject(whole)
	for size := 1; size < len(whole); size += 7 {
		var s Stream
		previews := 0
		for i := 0; i < len(whole); i += size {
			if s.Write(whole[i:min(i+size, len(whole))]) != nil {
				previews++
			}
		}
		got, complete := s.Final()
		if !complete || !reflect.DeepEqual(got, want) {
			t.Fatalf("size %d: %v %v", size, got, complete)
		}
		if size == 1 && previews > 12 {
			t.Fatalf("%d previews for %d bytes: not geometric", previews, len(whole))
		}
	}
}

// TestHostile: input built to exhaust the parser (nesting past MaxDepth,
// a lone surrogate, bytes that are not UTF-8, a number beyond float64) is
// refused as incomplete, salvages what the rules say, and returns well
// within a bound.
func TestHostile(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want any
	}{
		{"deep array", strings.Repeat("[", 100000), nil},
		{"deep object", strings.Repeat(`{"a":`, 50000), nil},
		{"lone surrogate", `"\ud800`, "\uFFFD"},
		{"not UTF-8", "\xff\xfe", nil},
		{"huge exponent", `{"a":1e999999}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type outcome struct {
				v        any
				complete bool
			}
			done := make(chan outcome, 1)
			go func() { v, c := Parse(tc.in); done <- outcome{v, c} }()
			select {
			case o := <-done:
				if o.complete || !reflect.DeepEqual(o.v, tc.want) {
					t.Fatalf("Parse = %#v, complete %v; want %#v, incomplete", o.v, o.complete, tc.want)
				}
			case <-time.After(10 * time.Second): // it takes milliseconds
				t.Fatal("Parse did not return")
			}
		})
	}
}

// FuzzParse checks, for any text: Parse never panics; a complete verdict
// means the text (possibly repaired) is JSON and the value is what
// encoding/json decodes and survives a round trip through it; valid JSON is
// always complete; a strict prefix of a valid JSON object never counts as
// complete, and salvages an object or nothing; and a Stream fed the text in
// pieces ends with the same value as ParseObject.
func FuzzParse(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"a":"hel`, `{"a":[1,{"b":tr`, `{"a":"\u00`, `{"a":1e`, "{\"a\":\"x\ny\"}", `[[[[`,
		`{"a":[1,2,{"b":null}],"c":"d\u00e9"}`, `{"k":-0.5e3,"t":true,"f":false}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, complete := Parse(s)
		var want any
		if json.Unmarshal([]byte(s), &want) == nil {
			if !complete {
				t.Fatalf("valid JSON %q parsed as incomplete", s)
			}
			if strings.TrimSpace(s) != "" && !reflect.DeepEqual(asFloats(v), want) {
				t.Fatalf("Parse(%q) = %#v, encoding/json gives %#v", s, v, want)
			}
		}
		if complete {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("complete value does not encode: %v", err)
			}
			back, ok := strict(string(b)) // numbers in their normal form, as Parse gives them
			if !ok || !reflect.DeepEqual(back, v) {
				t.Fatalf("round trip of %#v gives %#v (%v)", v, back, ok)
			}
		}
		if _, ok := want.(map[string]any); ok && len(s) <= 512 {
			for i := 1; i < len(s); i++ {
				p := s[:i]
				if strings.TrimSpace(p) == "" || json.Valid([]byte(p)) {
					continue
				}
				pv, pc := Parse(p)
				if pc {
					t.Fatalf("prefix %q counts as complete", p)
				}
				if _, isObj := pv.(map[string]any); pv != nil && !isObj {
					t.Fatalf("prefix %q of an object salvages %#v", p, pv)
				}
			}
		}
		var st Stream
		for i := 0; i < len(s); i += 3 {
			st.Write(s[i:min(i+3, len(s))])
		}
		if st.Text() != s {
			t.Fatal("stream lost text")
		}
		fv, fc := st.Final()
		ov, oc := ParseObject(s)
		if fc != oc || !reflect.DeepEqual(fv, ov) {
			t.Fatalf("stream ends with %#v (%v), ParseObject gives %#v (%v)", fv, fc, ov, oc)
		}
	})
}

// BenchmarkStream feeds arguments of growing size in 16-byte fragments.
// The throughput (MB/s) stays flat as the text grows: the whole stream
// costs O(n), where re-parsing the prefix per fragment would cost O(n²).
func BenchmarkStream(b *testing.B) {
	for _, kib := range []int{4, 64, 1024} {
		whole := `{"path":"a.txt","content":"` + strings.Repeat("abcdefgh", kib*128) + `"}`
		b.Run(strconv.Itoa(kib)+"KiB", func(b *testing.B) {
			b.SetBytes(int64(len(whole)))
			b.ReportAllocs()
			for b.Loop() {
				var s Stream
				for i := 0; i < len(whole); i += 16 {
					s.Write(whole[i:min(i+16, len(whole))])
				}
				if _, ok := s.Final(); !ok {
					b.Fatal("incomplete")
				}
			}
		})
	}
}

// asFloats turns the json.Numbers of a parsed value (integers beyond 2^53,
// kept exact) into the float64s encoding/json would give, checking that
// each is one.
func asFloats(v any) any {
	switch x := v.(type) {
	case json.Number:
		if !jsonnum.IsBigInteger(string(x)) {
			return "a json.Number that is not a big integer: " + string(x)
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = asFloats(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = asFloats(e)
		}
		return out
	}
	return v
}

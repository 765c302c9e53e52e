package schema

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/jsonnum"
)

type decInner struct {
	N  int      `json:"n"`
	Ok *bool    `json:"ok,omitempty"`
	Xs []string `json:"xs"`
}

type decEmbedded struct {
	E string `json:"e"`
}

type decAll struct {
	Name  string              `json:"name"`
	Count int                 `json:"count"`
	Ratio float64             `json:"ratio"`
	Small uint8               `json:"small"`
	Inner decInner            `json:"inner"`
	Ptr   *decInner           `json:"ptr"`
	List  []decInner          `json:"list"`
	Map   map[string]int      `json:"map"`
	Any   any                 `json:"any"`
	Raw   map[string]any      `json:"raw"`
	When  time.Time           `json:"when"`
	Skip  string              `json:"-"`
	Named map[string]decInner `json:"named"`
	NoTag string
}

type decQuoted struct {
	Quoted int `json:"quoted,string"`
}

type decWithEmbedded struct {
	decEmbedded
	F string `json:"f"`
}

// TestDecoderMatchesEncodingJSON: for every input, the reflective decoder
// produces what a round trip through encoding/json produces.
func TestDecoderMatchesEncodingJSON(t *testing.T) {
	cases := []struct {
		name string
		into any // a pointer to the zero value of the target type
		in   string
	}{
		{"flat", new(decAll), `{"name":"a","count":3,"ratio":0.5,"small":7}`},
		{"nested", new(decAll), `{"inner":{"n":1,"ok":true,"xs":["a","b"]},"ptr":{"n":2},"list":[{"n":3},{"xs":[]}]}`},
		{"maps and any", new(decAll), `{"map":{"a":1},"any":{"k":[1,"x",null]},"raw":{"z":{"y":false}},"named":{"k":{"n":4}}}`},
		{"nulls", new(decAll), `{"ptr":null,"list":null,"any":null,"map":null}`},
		{"case-insensitive keys", new(decAll), `{"NAME":"a","Count":2,"notag":"x","INNER":{"N":5}}`},
		{"unknown and skipped keys", new(decAll), `{"other":1,"Skip":"s","-":"dash"}`},
		{"time goes through encoding/json", new(decAll), `{"when":"2026-01-02T03:04:05Z"}`},
		{",string goes through encoding/json", new(decQuoted), `{"quoted":"12"}`},
		{"embedded struct", new(decWithEmbedded), `{"e":"x","f":"y"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal([]byte(tc.in), &m); err != nil {
				t.Fatal(err)
			}
			typ := reflect.TypeOf(tc.into).Elem()
			if typ == reflect.TypeFor[decAll]() && newDecoder(typ).root.slow {
				t.Fatal("decAll would be decoded by encoding/json, not the decoder under test")
			}
			got := reflect.New(typ)
			if err := newDecoder(typ).decodeValue(got.Elem(), m, newDecoder(typ).root); err != nil {
				t.Fatalf("decoder: %v", err)
			}
			want := reflect.New(typ)
			if err := json.Unmarshal([]byte(tc.in), want.Interface()); err != nil {
				t.Fatalf("encoding/json: %v", err)
			}
			if !reflect.DeepEqual(got.Interface(), want.Interface()) {
				t.Fatalf("decoder gave %+v\nencoding/json gave %+v", got.Elem(), want.Elem())
			}
		})
	}
}

// TestDecoderRefusesWhatDoesNotFit: values of the wrong kind are errors
// naming the field, not panics or silent zeroes.
func TestDecoderRefusesWhatDoesNotFit(t *testing.T) {
	for _, in := range []string{`{"count":1.5}`, `{"small":300}`, `{"small":-1}`, `{"name":3}`, `{"inner":[]}`, `{"list":{}}`} {
		var m map[string]any
		if err := json.Unmarshal([]byte(in), &m); err != nil {
			t.Fatal(err)
		}
		d := newDecoder(reflect.TypeFor[decAll]())
		var out decAll
		if err := d.decodeValue(reflect.ValueOf(&out).Elem(), m, d.root); err == nil {
			t.Errorf("%s: decoded without error into %+v", in, out)
		}
	}
}

// TestDecoderExactKeyWins pins where the decoder and encoding/json part:
// for an object holding both a field's exact name and a case-folded one,
// encoding/json keeps the later key, while the decoder, which receives a
// map with no key order, keeps the exact one.
func TestDecoderExactKeyWins(t *testing.T) {
	for _, in := range []string{`{"name":"exact","Name":"folded"}`, `{"Name":"folded","name":"exact"}`} {
		got, err := decodeText[decAll](in)
		if err != nil || got.Name != "exact" {
			t.Errorf("%s: Name %q (%v), want the exact key's value", in, got.Name, err)
		}
	}
}

// decodeText decodes JSON text the way arguments reach the decoder (read
// with json.Number and put in their normal form, as providers do), then
// into a T.
func decodeText[T any](text string) (T, error) {
	var out T
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return out, err
	}
	v, ok := cloneDepth(raw, -1)
	if !ok {
		return out, errors.New("too deep")
	}
	d := newDecoder(reflect.TypeFor[T]())
	err := d.decodeValue(reflect.ValueOf(&out).Elem(), v, d.root)
	return out, err
}

// decKinds has a field of every kind the decoder handles itself.
type decKinds struct {
	S   string            `json:"s"`
	B   bool              `json:"b"`
	I   int               `json:"i"`
	I8  int8              `json:"i8"`
	I16 int16             `json:"i16"`
	I32 int32             `json:"i32"`
	I64 int64             `json:"i64"`
	U   uint              `json:"u"`
	U8  uint8             `json:"u8"`
	U16 uint16            `json:"u16"`
	U32 uint32            `json:"u32"`
	U64 uint64            `json:"u64"`
	F32 float32           `json:"f32"`
	F64 float64           `json:"f64"`
	P   *int64            `json:"p"`
	L   []int16           `json:"l"`
	M   map[string]uint32 `json:"m"`
	A   any               `json:"a"`
	N   *decKinds         `json:"n"`
}

// FuzzDecoder compares the decoder with encoding/json on raw JSON text,
// for a field of every kind:
//   - what encoding/json decodes, the decoder decodes to the same value;
//   - what the decoder decodes, encoding/json decodes too, unless the text
//     writes an integer with a fraction, an exponent or a minus sign (1.0,
//     1e2, -0: integers to JSON Schema, which the decoder accepts for
//     integer fields on purpose, where encoding/json wants 1, 100, 0).
//
// An any field holds an integer beyond 2^53 as a json.Number (exact) where
// encoding/json gives a float64; the comparison reads it as the float64.
// Left out: objects holding two keys for one field (TestDecoderExactKeyWins),
// and numbers past float64's range that are not integer literals (1e400),
// which validation refuses before any decoding.
func FuzzDecoder(f *testing.F) {
	for _, s := range []string{`{"i64":9223372036854775807}`, `{"i64":9223372036854775808}`, `{"i64":-9223372036854775808}`,
		`{"u64":18446744073709551615}`, `{"u64":18446744073709551616}`, `{"i8":-129}`, `{"u8":256}`, `{"u":-1}`,
		`{"i":1.0}`, `{"i":1e2}`, `{"i":1.5}`, `{"f32":3.4028235e38}`, `{"f32":3.5e38}`, `{"s":1}`, `{"b":"true"}`,
		`{"p":null,"l":[1,-32768,32767],"m":{"a":4294967295},"a":{"x":[1,"y",null]},"n":{"i":1,"n":{"s":"deep"}}}`,
		`{"l":[32768]}`, `{"m":{"a":-1}}`, `{"I":1,"S":"folded"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !json.Valid([]byte(text)) || hugeNonInteger(text) || ambiguousKeys(text) {
			return
		}
		var want decKinds
		wantErr := json.Unmarshal([]byte(text), &want)
		got, gotErr := decodeText[decKinds](text)
		// An any field keeps an integer beyond 2^53 exact, as a
		// json.Number; encoding/json gives the float64.
		for k := &got; k != nil; k = k.N {
			k.A = googleView(k.A)
		}
		switch {
		case wantErr == nil && gotErr != nil:
			t.Fatalf("%s: encoding/json decodes it, the decoder says %v", text, gotErr)
		case wantErr == nil && !reflect.DeepEqual(got, want):
			t.Fatalf("%s:\n decoder       %+v\n encoding/json %+v", text, got, want)
		case wantErr != nil && gotErr == nil && !strings.ContainsAny(text, ".eE") && !strings.Contains(text, "-0"):
			t.Fatalf("%s: the decoder accepts it as %+v, encoding/json says %v", text, got, wantErr)
		}
	})
}

// hugeNonInteger reports whether text has a number past float64's range
// that is not an integer literal.
func hugeNonInteger(text string) bool {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		if n, ok := tok.(json.Number); ok {
			if _, ok := jsonnum.Normal(string(n)); !ok {
				return true
			}
		}
	}
}

// ambiguousKeys reports whether an object in text has two keys that
// encoding/json would match to one field (equal but for case). A key
// written twice is not ambiguous: the later one wins on both sides.
func ambiguousKeys(text string) bool {
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		case map[string]any:
			seen := map[string]bool{}
			for k, e := range x {
				folded := strings.ToLower(strings.ToUpper(k))
				if seen[folded] || walk(e) {
					return true
				}
				seen[folded] = true
			}
		}
		return false
	}
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		return true
	}
	return walk(v)
}

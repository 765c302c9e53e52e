package tools

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
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
		{"exact key beats a folded one", new(decAll), `{"name":"exact","Name":"folded"}`},
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
			if tc.name == "exact key beats a folded one" {
				// encoding/json lets the later key win; a map has no
				// order, so the decoder lets the exact name win.
				want.Elem().FieldByName("Name").SetString("exact")
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

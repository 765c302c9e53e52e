package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentloop/agentloop/internal/harness/hostileschema"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// The tests in this file play a hostile MCP server: schemas built to make
// validation recurse without end, through every way JSON Schema can name
// a schema, nested or chained as deep as the text allows. Each runs in
// this test process: a Go stack overflow cannot be recovered and would
// kill the test binary, so a passing run proves that none happened.

// defsChain is an object schema whose property p refers to the first of n
// definitions, each referring to the next (by the form ref gives), the
// last an integer.
func defsChain(n int, ref func(i int) string) string {
	id := func(i int) string {
		if ref(i)[0] == '#' {
			return ""
		}
		return fmt.Sprintf(`"$id":"urn:a%d",`, i)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"object","properties":{"p":{"$ref":%q}},"$defs":{`, ref(0))
	for i := range n {
		fmt.Fprintf(&b, `"a%d":{%s"$ref":%q},`, i, id(i), ref(i+1))
	}
	fmt.Fprintf(&b, `"a%d":{%s"type":"integer"}}}`, n, id(n))
	return b.String()
}

func byPointer(i int) string { return fmt.Sprintf("#/$defs/a%d", i) }
func byURI(i int) string     { return fmt.Sprintf("urn:a%d", i) }

// nested is an object schema whose property p is n levels of keyword kw,
// each holding the next ({"not":{"not":...{}}}).
func nested(kw string, n int) string {
	open, close := `{"`+kw+`":`, `}`
	if kw == "allOf" {
		open, close = `{"allOf":[`, `]}`
	}
	return `{"type":"object","properties":{"p":` + strings.Repeat(open, n) + `{}` + strings.Repeat(close, n) + `}}`
}

// TestHostileSchemasRefused compiles schemas whose validation could never
// end, or would go deeper than MaxCheckDepth for every value: each is
// refused.
func TestHostileSchemasRefused(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		want         error // when set, errors.Is must hold
	}{
		{"percent-escaped pointer", `{"type":"object","properties":{"p":{"$ref":"#/properties/%70"}}}`, errRefCycle},
		{"percent-escaped keyword", `{"type":"object","properties":{"p":{"$ref":"#/%70roperties/p"}}}`, errRefCycle},
		{"~1 escape", `{"type":"object","properties":{"a/b":{"$ref":"#/properties/a~1b"}}}`, errRefCycle},
		{"~0 escape", `{"type":"object","properties":{"a~b":{"$ref":"#/properties/a~0b"}}}`, errRefCycle},
		{"percent-escaped ~1", `{"type":"object","properties":{"a/b":{"$ref":"#/properties/a%7E1b"}}}`, errRefCycle},
		{"root", `{"type":"object","allOf":[{"$ref":"#"}]}`, errRefCycle},
		{"empty pointer", `{"type":"object","properties":{"p":{"anyOf":[{"$ref":"#/properties/p"}]}}}`, errRefCycle},
		{"absolute $id", `{"type":"object","properties":{"p":{"$ref":"urn:x"}},"$defs":{"x":{"$id":"urn:x","$ref":"urn:x"}}}`, errRefCycle},
		{"$id with an empty fragment", `{"type":"object","properties":{"p":{"$ref":"urn:x#"}},"$defs":{"x":{"$id":"urn:x","$ref":"urn:x#"}}}`, errRefCycle},
		{"relative $id", `{"type":"object","properties":{"p":{"$ref":"http://e.com/d/a"}},"$defs":{"a":{"$id":"http://e.com/d/a","$ref":"b","$defs":{"b":{"$id":"b","$ref":"a"}}}}}`, errRefCycle},
		{"pointer into an $id", `{"type":"object","properties":{"p":{"$ref":"urn:x#/$defs/y"}},"$defs":{"x":{"$id":"urn:x","$defs":{"y":{"not":{"$ref":"#/$defs/y"}}}}}}`, errRefCycle},
		{"$anchor", `{"type":"object","properties":{"p":{"$ref":"#x"}},"$defs":{"x":{"$anchor":"x","oneOf":[{"$ref":"#x"}]}}}`, errRefCycle},
		{"anchor in an $id", `{"type":"object","properties":{"p":{"$ref":"urn:x#y"}},"$defs":{"x":{"$id":"urn:x","$defs":{"y":{"$anchor":"y","$ref":"urn:x#y"}}}}}`, errRefCycle},
		{"$dynamicRef", `{"type":"object","properties":{"p":{"$ref":"#/$defs/x"}},"$defs":{"x":{"$dynamicAnchor":"x","$dynamicRef":"#x"}}}`, errRefCycle},
		{"$dynamicRef to another resource's anchor", `{"type":"object","$dynamicAnchor":"n","properties":{"p":{"$ref":"urn:x"}},"$defs":{"x":{"$id":"urn:x","$dynamicAnchor":"n","allOf":[{"$dynamicRef":"#n"}]}}}`, errRefCycle},
		{"draft-07 definitions", `{"type":"object","properties":{"p":{"$ref":"#/definitions/a"}},"definitions":{"a":{"$ref":"#/definitions/b"},"b":{"$ref":"#/definitions/a"}}}`, errRefCycle},
		{"not", `{"type":"object","properties":{"p":{"not":{"$ref":"#/properties/p"}}}}`, errRefCycle},
		{"if/then/else", `{"type":"object","if":{"$ref":"#"},"then":true}`, errRefCycle},
		{"then", `{"type":"object","if":true,"then":{"$ref":"#"}}`, errRefCycle},
		{"dependentSchemas", `{"type":"object","dependentSchemas":{"p":{"$ref":"#"}}}`, errRefCycle},
		{"draft-07 dependencies", `{"type":"object","dependencies":{"p":{"$ref":"#"}}}`, errRefCycle},
		{"cycle in an unused definition", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/a"}}}`, errRefCycle},
		{"pointer to an absent keyword", `{"type":"object","properties":{"p":{"$ref":"#/not"}}}`, nil},
		{"pointer to a non-schema", `{"type":"object","properties":{"p":{"$ref":"#/required"}},"required":["p"]}`, nil},
		{"unknown anchor", `{"type":"object","properties":{"p":{"$ref":"#nowhere"}}}`, nil},
		{"remote", `{"type":"object","properties":{"p":{"$ref":"https://json-schema.org/draft/2020-12/schema"}}}`, nil},
		{"relative to no base", `{"type":"object","properties":{"p":{"$ref":"other.json"}}}`, nil},
		{"a chain of 5,000 pointers", defsChain(5000, byPointer), errSchemaTooDeep},
		{"a chain of 5,000 URIs", defsChain(5000, byURI), errSchemaTooDeep},
		{"9,000 nested not", nested("not", 9000), errSchemaTooDeep},
		{"two chains of 600, one below the other", twoChains(600), errSchemaTooDeep},
		{"4,000 nested allOf", nested("allOf", 4000), errSchemaTooDeep},
		{"references that double 30 times", doubling(30), errSchemaTooCostly},
		{"12 nested anyOf of two", nestedPairs("anyOf", 12), errSchemaTooCostly},
		{"12 nested oneOf of two", nestedPairs("oneOf", 12), errSchemaTooCostly},
		{"100,000 nested items (the text)", nested("items", 100_000), nil},
		{"100,000 nested not (the text)", nested("not", 100_000), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := compileJSON(json.RawMessage(tc.schema))
			if err == nil {
				_, cerr := s.Check(map[string]any{"p": 1.0})
				t.Fatalf("compiled; a check gives %v", cerr)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
		})
	}
}

// twoChains is an object schema that applies a chain of n references to
// its own value, whose last schema applies another chain of n to the value
// of its property p: no value with a property could be checked.
func twoChains(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","allOf":[{"$ref":"#/$defs/b0"}],"$defs":{`)
	for i := range n {
		fmt.Fprintf(&b, `"a%d":{"$ref":"#/$defs/a%d"},"b%d":{"$ref":"#/$defs/b%d"},`, i, i+1, i, i+1)
	}
	fmt.Fprintf(&b, `"a%d":{},"b%d":{"properties":{"p":{"$ref":"#/$defs/a0"}}}}}`, n, n)
	return b.String()
}

// doubling is an object schema whose property p refers to the first of n
// definitions, each applying the next twice: 2^n schemas for one value.
func doubling(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"p":{"$ref":"#/$defs/a0"}},"$defs":{`)
	for i := range n {
		fmt.Fprintf(&b, `"a%d":{"allOf":[{"$ref":"#/$defs/a%d"},{"$ref":"#/$defs/a%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"a%d":{"type":"integer"}}}`, n)
	return b.String()
}

// nestedPairs is an object schema whose property p is n levels of kw, each
// holding two copies of the next (its text doubles with every level).
func nestedPairs(kw string, n int) string {
	s := `{"type":"integer"}`
	for range n {
		s = `{"` + kw + `":[` + s + `,` + s + `]}`
	}
	return `{"type":"object","properties":{"p":` + s + `}}`
}

// TestRemoteReferenceNeverFetched: a reference to a schema outside the
// document is refused without a request being made.
func TestRemoteReferenceNeverFetched(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"type":"integer"}`))
	}))
	defer srv.Close()
	for _, ref := range []string{srv.URL + "/s.json", srv.URL + "/s.json#/$defs/x", srv.URL + "/s.json#a"} {
		schema := fmt.Sprintf(`{"type":"object","properties":{"p":{"$ref":%q},"q":{"$dynamicRef":%q}}}`, ref, ref)
		if _, err := compileJSON(json.RawMessage(schema)); err == nil {
			t.Errorf("%s: compiled", ref)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server was asked %d times", n)
	}
}

// TestDeepArgumentsAgainstRecursiveSchemas: a schema that legitimately
// descends into the value, through references, checks arguments up to the
// depth MaxCheckDepth allows; deeper arguments fail the check with
// ErrCheckLimit (or, past MaxArgumentDepth, the validation listing), never
// the process. The compiled checker and google/jsonschema-go (which
// decides when the schema has a keyword the checker leaves to it) get the
// same bound.
func TestDeepArgumentsAgainstRecursiveSchemas(t *testing.T) {
	const tooDeep, limit = "must not nest objects and arrays more than 100 levels deep", "limit"
	for _, tc := range []struct {
		name   string
		schema string
		depth  int
		want   string // "" for a call that passes
	}{
		{"plain recursion, 100 deep", `{"type":"object","properties":{"c":{"$ref":"#"}}}`, 100, ""},
		{"plain recursion, 101 deep", `{"type":"object","properties":{"c":{"$ref":"#"}}}`, 101, tooDeep},
		{"plain recursion, 100,000 deep", `{"type":"object","properties":{"c":{"$ref":"#"}}}`, 100_000, tooDeep},
		{"items recursion, 5,000 deep", `{"type":"object","properties":{"c":{"type":"array","items":{"$ref":"#/properties/c"}}}}`, 5000, tooDeep},
		{"chains of 20, 40 deep", hostileschema.RecursiveChain(20, ""), 40, ""},
		{"chains of 20, 60 deep", hostileschema.RecursiveChain(20, ""), 60, limit},
		{"chains of 20, 100 deep", hostileschema.RecursiveChain(20, ""), 100, limit},
		{"chains of 20, 200 deep", hostileschema.RecursiveChain(20, ""), 200, tooDeep},
		{"google decides, 40 deep", hostileschema.RecursiveChain(20, "google"), 40, ""},
		{"google decides, 60 deep", hostileschema.RecursiveChain(20, "google"), 60, limit},
		{"dynamic, 60 deep", hostileschema.RecursiveChain(20, "dynamic"), 60, limit},
		{"pointer chains of 10, 30 deep", hostileschema.PointerRecursion(10), 30, ""},
		{"pointer chains of 10, 90 deep", hostileschema.PointerRecursion(10), 90, limit},
		{"two ways at every level, 5 deep", `{"type":"object","properties":{"c":{"anyOf":[{"$ref":"#"},{"$ref":"#"}]}}}`, 5, ""},
		{"two ways at every level, 40 deep", `{"type":"object","properties":{"c":{"anyOf":[{"$ref":"#"},{"$ref":"#"}]}}}`, 40, limit},
		{"google decides two ways, 40 deep", `{"type":"object","unevaluatedProperties":false,"properties":{"c":{"allOf":[{"$ref":"#"},{"$ref":"#"}]}}}`, 40, limit},
		{"$recursiveRef (not a 2020-12 keyword: ignored)", `{"type":"object","$recursiveAnchor":true,"properties":{"c":{"$recursiveRef":"#"}},"additionalProperties":{"$recursiveRef":"#"}}`, 100, ""},
		{"contentSchema (an annotation)", `{"type":"object","properties":{"c":{"contentSchema":{"$ref":"#/properties/c"},"$ref":"#"}}}`, 100, ""},
		{"chains of 900, 1 deep", hostileschema.RecursiveChain(900, ""), 1, ""},
		{"chains of 900, 2 deep", hostileschema.RecursiveChain(900, ""), 2, limit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, err := compileJSON(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			if google := strings.Contains(tc.name, "google") || strings.Contains(tc.name, "dynamic") || strings.Contains(tc.name, "$recursiveRef"); tool.decides == google {
				t.Fatalf("the compiled checker decides: %v", tool.decides)
			}
			args := hostileschema.DeepValue(tc.depth)
			_, err = tool.Check(args)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
			case err == nil:
				t.Fatal("passed")
			case tc.want == limit && !errors.Is(err, ErrCheckLimit):
				t.Fatalf("error %q, want %q", err, ErrCheckLimit)
			case tc.want == limit:
			case !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q, want %q", err, tc.want)
			}
		})
	}
}

// TestLegitimateReferenceForms: schemas that name their parts in every
// form are resolved as google/jsonschema-go resolves them: the compiled
// checker decides, coercion follows the reference, and every verdict is
// google's.
func TestLegitimateReferenceForms(t *testing.T) {
	for _, tc := range []struct {
		name, schema   string
		valid, invalid []string // values of p
	}{
		{"relative $id", `{"type":"object","properties":{"p":{"$ref":"http://e.com/s/a.json"}},"$defs":{"r":{"$id":"http://e.com/s/","$defs":{"a":{"$id":"a.json","$ref":"b.json"},"b":{"$id":"b.json","type":"integer","minimum":3}}}}}`,
			[]string{`3`, `"7"`}, []string{`2`, `"x"`, `3.5`}},
		{"$anchor", `{"type":"object","properties":{"p":{"$ref":"#pos"}},"$defs":{"x":{"$anchor":"pos","type":"number","exclusiveMinimum":0}}}`,
			[]string{`1`, `"0.5"`}, []string{`0`, `"a"`}},
		{"anchor in an $id", `{"type":"object","properties":{"p":{"$ref":"urn:r#a"}},"$defs":{"r":{"$id":"urn:r","$defs":{"x":{"$anchor":"a","type":"boolean"}}}}}`,
			[]string{`true`, `"false"`}, []string{`"yes"`, `2`}},
		{"percent-escaped pointer", `{"type":"object","properties":{"p":{"$ref":"#/$defs/a%20b"}},"$defs":{"a b":{"type":"string","minLength":2}}}`,
			[]string{`"ab"`, `12`}, []string{`"a"`, `{}`}},
		{"~0 and ~1", `{"type":"object","properties":{"p":{"$ref":"#/$defs/x~1y~0z"}},"$defs":{"x/y~z":{"enum":[1,2]}}}`,
			[]string{`1`, `2`}, []string{`3`, `"1"`}},
		{"draft-07 definitions", `{"type":"object","properties":{"p":{"$ref":"#/definitions/n"}},"definitions":{"n":{"type":"array","items":{"$ref":"#/definitions/m"}},"m":{"type":"integer"}}}`,
			[]string{`[]`, `[1,"2"]`}, []string{`[1.5]`, `1`}},
		{"recursion through the root", `{"type":"object","properties":{"p":{"anyOf":[{"type":"integer"},{"$ref":"#"}]}}}`,
			[]string{`1`, `{"p":{"p":2}}`}, []string{`"x"`, `{"p":[]}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, err := compileJSON(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			if !tool.decides {
				t.Fatal("the compiled checker does not decide")
			}
			for i, raw := range append(tc.valid, tc.invalid...) {
				var p any
				if err := json.Unmarshal([]byte(raw), &p); err != nil {
					t.Fatal(err)
				}
				args := map[string]any{"p": p}
				_, err := tool.Check(args)
				if want := i < len(tc.valid); (err == nil) != want {
					t.Errorf("p = %s: check error %v, want valid=%v", raw, err, want)
				}
				c, _ := coerce(clone(args), tool.root)
				if ours, google := tool.root.valid(c), tool.googleValidate(c); ours != (google == nil) {
					t.Errorf("p = %s (coerced %v): checker says %v, google %v", raw, c, ours, google)
				}
			}
		})
	}
}

// TestBigIntegersInEnumsAgreeWithGoogle: a schema's numbers reach the
// validator as float64s, so enum and const compare big integers as
// float64s, and the checker's verdict is google/jsonschema-go's.
func TestBigIntegersInEnumsAgreeWithGoogle(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"n":{"enum":[9007199254740993]},"c":{"const":18446744073709551615}}}`)
	for _, args := range []map[string]any{
		{"n": json.Number("9007199254740993"), "c": json.Number("18446744073709551615")},
		{"n": json.Number("9007199254740992")},
		{"n": 9007199254740992.0},
		{"n": json.Number("9007199254741000")},
		{"c": json.Number("18446744073709551614")},
		{"c": 1.0},
	} {
		v, _ := cloneDepth(map[string]any(args), MaxArgumentDepth)
		google := s.resolved.Validate(googleView(v)) == nil
		if !s.decides || s.root.valid(v) != google {
			t.Errorf("%v: checker says %v, google %v", args, !google, google)
		}
	}
}

// TestDecidesOnlyWhatItImplements: the compiled checker decides a schema
// whose references go by anchor, and leaves one with a keyword it does not
// know to google/jsonschema-go.
func TestDecidesOnlyWhatItImplements(t *testing.T) {
	if s := mustCompile(t, `{"type":"object","$defs":{"n":{"$anchor":"num","type":"number"}},"properties":{"x":{"$ref":"#num"}}}`); !s.decides {
		t.Error("the checker leaves a schema named by an anchor to google")
	}
	if s := mustCompile(t, `{"type":"object","x-vendor":true,"properties":{"a":{"type":"string"}}}`); s.decides {
		t.Error("the checker decides a schema with a keyword it does not know")
	}
}

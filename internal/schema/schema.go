// Package schema is the JSON Schema engine behind package tools: it reads
// a tool's schema (from JSON text, or from a Go type), resolves and bounds
// it, and compiles it once into a [Schema] that coerces, checks and lists
// the violations of a call's arguments; a [Decoder] moves checked
// arguments into a Go value.
//
//	s, err := schema.Compile(js)          // refused: loops, past the bounds
//	checked, err := s.Check(args)         // *Invalid, or ErrCheckLimit
//	in, err := schema.NewDecoder[Args](s).Decode(checked)
//
// The compiled checker's verdict is google/jsonschema-go's (tests compare
// them on the official test suite and on fuzzed schemas and arguments); a
// schema using a keyword it does not implement is judged by
// google/jsonschema-go on every call. No schema and no arguments make a
// check recurse without end: see [MaxCheckDepth] and its siblings.
package schema

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schema is a compiled schema for a tool's arguments. It is immutable and
// safe for concurrent use.
type Schema struct {
	resolved *jsonschema.Resolved
	root     *node
	decides  bool  // root.valid is the verdict; see valid
	argDepth int   // how deeply arguments may nest; see MaxCheckDepth
	steps    []int // schemas applied at each level of the value, or nil; see MaxCheckSteps
}

// ErrCheckLimit is what [Schema.Check] returns for arguments that would
// take the check past [MaxCheckDepth] or [MaxCheckSteps]; nothing was
// checked.
var ErrCheckLimit = errors.New("schema: checking the arguments would go past the check's bounds")

// Invalid reports a value that does not fit: its schema's, or the Go
// type's it is decoded into.
type Invalid struct {
	// Violations lists every violation found, by path, in the order the
	// reference reports them.
	Violations []Violation
	// Cause is google/jsonschema-go's own error for the value, naming the
	// first violation by schema location, or nil.
	Cause error
}

// Error lists the violations as "path: message", separated by "; ".
func (e *Invalid) Error() string {
	if len(e.Violations) == 0 {
		if e.Cause != nil {
			return "root: " + e.Cause.Error()
		}
		return "root: invalid"
	}
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.Path + ": " + v.Message
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns Cause.
func (e *Invalid) Unwrap() error { return e.Cause }

// Compile resolves s and compiles it. google/jsonschema-go resolves it
// first (a reference to a remote schema is refused: nothing is fetched);
// then its references are resolved again here, into the graph that refuses
// a schema whose validation could never end and measures how deeply
// arguments may nest (see MaxCheckDepth). A schema the compiled checker
// cannot compile (a $ref to a URI defined twice, ...) is judged by google
// alone: its arguments are not coerced, and a refusal names google's first
// violation.
func Compile(s *jsonschema.Schema) (*Schema, error) {
	resolved, err := s.Resolve(&jsonschema.ResolveOptions{})
	if err != nil {
		return nil, err
	}
	g, err := analyze(s)
	if err != nil {
		return nil, err
	}
	argDepth, err := g.argumentDepth()
	if err != nil {
		return nil, err
	}
	steps, err := g.checkSteps(argDepth)
	if err != nil {
		return nil, err
	}
	compiled := true
	root, err := compileSchema(g)
	if err != nil {
		compiled, root = false, &node{s: &jsonschema.Schema{}} // coerces nothing, lists nothing
	}
	return &Schema{resolved: resolved, root: root, decides: compiled && decides(root), argDepth: argDepth, steps: steps}, nil
}

// Check coerces args toward the schema (numbers from numeric strings,
// booleans from "true"/"false", ...) and decides. It returns the checked
// value, which shares with args whatever coercion did not change; an
// [*Invalid] listing every violation; or [ErrCheckLimit]. Arguments nested
// more than [MaxArgumentDepth] deep are refused without walking further.
// It never changes args.
func (s *Schema) Check(args any) (any, error) {
	v := args
	if !isNormal(args, MaxArgumentDepth) {
		var ok bool
		if v, ok = cloneDepth(args, MaxArgumentDepth); !ok {
			return nil, TooDeep()
		}
	}
	if s.argDepth < MaxArgumentDepth && !isNormal(v, s.argDepth) || s.steps != nil && !withinSteps(v, s.steps) {
		return nil, ErrCheckLimit
	}
	v, _ = coerce(v, s.root)
	if s.valid(v) {
		return v, nil
	}
	return nil, &Invalid{Violations: s.root.violations(v), Cause: s.googleValidate(v)}
}

// TooDeep is the refusal of arguments nested more than MaxArgumentDepth
// deep.
func TooDeep() *Invalid {
	return &Invalid{Violations: []Violation{
		{Path: "root", Message: "must not nest objects and arrays more than " + itoa(MaxArgumentDepth) + " levels deep"}}}
}

// Coerce returns v coerced toward the schema, and whether anything
// changed; what did not change is shared with v. v must be normalized
// (see [Clone]) and within [MaxArgumentDepth].
func (s *Schema) Coerce(v any) (any, bool) { return coerce(v, s.root) }

// Violations lists every way a coerced value fails the compiled checker,
// by instance path, in the reference's order.
func (s *Schema) Violations(v any) []Violation { return s.root.violations(v) }

// googleValidate is google/jsonschema-go's verdict on a coerced value; a
// panic in the validator is an error.
func (s *Schema) googleValidate(v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("validator panic: %v", p)
		}
	}()
	return s.resolved.Validate(googleView(v))
}

// valid decides whether a coerced value fits the schema. The compiled
// checker decides when it implements every keyword the schema uses (see
// decides); its verdict is google/jsonschema-go's on every case of the
// official test suite and every fuzzed input, at a fraction of the cost.
// Other schemas are judged by google/jsonschema-go.
func (s *Schema) valid(v any) bool {
	if s.decides {
		return s.root.valid(v)
	}
	return s.googleValidate(v) == nil
}

// Clone returns a deep copy of a JSON value normalized to the types
// encoding/json decodes into (see internal/jsonnum for big integers), or
// false when it nests deeper than depth; depth < 0 means no bound.
func Clone(v any, depth int) (any, bool) { return cloneDepth(v, depth) }

// TypeName names a JSON value's type as the model reads it ("object",
// "array", "number", ...).
func TypeName(v any) string { return jsType(v) }

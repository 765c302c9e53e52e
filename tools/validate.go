package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// maxListed is how many violations the error text lists, as in the
// reference (TypeBox stops at eight); Violations keeps all of them.
const maxListed = 8

// CheckLimitText is the error text, and what the model reads, when
// checking a call's arguments against the tool's schema would go past the
// check's bounds: more than [MaxCheckDepth] schemas one within another (a
// recursive schema whose every level goes through a chain of references,
// say), or more than [MaxCheckSteps] schemas applied in all (a schema
// whose references multiply at every level). The call is refused before
// anything is checked.
const CheckLimitText = "The tool call was not executed: its arguments nest too deeply, or are too large, to be checked against the tool's schema. Send smaller, less deeply nested arguments."

// checkLimit is the error whose text is CheckLimitText: a text the model
// reads, not a Go error string.
type checkLimit struct{}

func (checkLimit) Error() string { return CheckLimitText }

// errCheckLimit refuses a call past the check's bounds.
var errCheckLimit error = checkLimit{}

// ValidationError reports arguments that do not fit a tool's schema. Its
// Error text is what the model sees.
type ValidationError struct {
	// Tool is the name of the tool the call named.
	Tool string
	// Violations lists every violation found, by path, in the order the
	// reference reports them; the text shows the first maxListed.
	Violations []Violation
	// Received is the argument value that was validated: after
	// PrepareArguments, before coercion.
	Received any
	// Cause is google/jsonschema-go's own error for the value, naming
	// the first violation by schema location.
	Cause error
}

// Error formats the error the way the reference does.
func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Validation failed for tool %q:\n", e.Tool)
	if len(e.Violations) == 0 {
		b.WriteString("  - root: ")
		if e.Cause != nil {
			b.WriteString(e.Cause.Error())
		} else {
			b.WriteString("Unknown validation error")
		}
		b.WriteByte('\n')
	}
	for i, v := range e.Violations {
		if i == maxListed {
			break
		}
		fmt.Fprintf(&b, "  - %s: %s\n", v.Path, v.Message)
	}
	b.WriteString("\nReceived arguments:\n")
	if _, ok := cloneDepth(e.Received, MaxArgumentDepth+1); !ok { // its text would have no end
		fmt.Fprintf(&b, "(nested more than %d levels deep; not shown)", MaxArgumentDepth)
	} else {
		b.WriteString(indentJSON(e.Received))
	}
	return b.String()
}

// Unwrap returns the validator's own error.
func (e *ValidationError) Unwrap() error { return e.Cause }

// validate coerces args toward the schema and decides. The result shares
// with args whatever coercion did not change.
func (t *Tool) validate(args any) (any, error) {
	v := args
	if !isNormal(args, MaxArgumentDepth) {
		var ok bool
		if v, ok = cloneDepth(args, MaxArgumentDepth); !ok {
			return nil, t.nestedTooDeep(args)
		}
	}
	if t.argDepth < MaxArgumentDepth && !isNormal(v, t.argDepth) || t.steps != nil && !withinSteps(v, t.steps) {
		return nil, errCheckLimit
	}
	v, _ = coerce(v, t.root)
	if t.valid(v) {
		return v, nil
	}
	return nil, &ValidationError{Tool: t.cfg.Name, Violations: t.root.violations(v), Received: args, Cause: t.googleValidate(v)}
}

// nestedTooDeep refuses arguments nested more than MaxArgumentDepth deep.
func (t *Tool) nestedTooDeep(args any) error {
	return &ValidationError{Tool: t.cfg.Name, Received: args, Violations: []Violation{
		{Path: "root", Message: "must not nest objects and arrays more than " + itoa(MaxArgumentDepth) + " levels deep"}}}
}

// googleValidate is google/jsonschema-go's verdict on a coerced value; a
// panic in the validator is an error.
func (t *Tool) googleValidate(v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("validator panic: %v", p)
		}
	}()
	return t.resolved.Validate(googleView(v))
}

// valid decides whether a coerced value fits the schema. The compiled
// checker decides when it implements every keyword the schema uses (see
// decides); its verdict is google/jsonschema-go's on every case of the
// official test suite and every fuzzed input, at a fraction of the cost.
// Other schemas are judged by google/jsonschema-go.
func (t *Tool) valid(v any) bool {
	if t.decides {
		return t.root.valid(v)
	}
	return t.googleValidate(v) == nil
}

// prepare runs the argument pipeline for one call, up to the checked
// arguments: a deep copy of raw through PrepareArguments (when set), then
// coercion and validation. A panicking shim is reported as an error. The
// result may share maps and slices with raw (only what coercion changed is
// new): it is read-only, and bind gives the body a value of its own.
func (t *Tool) prepare(raw map[string]any) (args any, err error) {
	var in any = raw
	if t.cfg.PrepareArguments != nil {
		defer func() {
			if r := recover(); r != nil {
				args, err = nil, fmt.Errorf("panic: %v", r)
			}
		}()
		c, ok := cloneDepth(raw, MaxArgumentDepth)
		if !ok {
			return nil, t.nestedTooDeep(raw)
		}
		m, _ := c.(map[string]any)
		if m, err = t.cfg.PrepareArguments(m); err != nil {
			return nil, err
		}
		in = m
	}
	return t.validate(in)
}

func indentJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

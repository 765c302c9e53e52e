package schema

import (
	"encoding/json"
	"iter"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/agentloop/agentloop/internal/jsonnum"
)

// clone returns a deep copy of a JSON value (maps, slices, strings,
// numbers, booleans and nil), normalized to the types encoding/json decodes
// into: every number becomes a float64, except an integer beyond ±2^53,
// which stays (or becomes) a json.Number so that it is never rounded (see
// internal/jsonnum). Values of other Go types are converted through
// their JSON encoding; a value that cannot be encoded is kept as it is, and
// validation will reject it.
func clone(v any) any {
	c, _ := cloneDepth(v, -1)
	return c
}

// cloneDepth is clone with a nesting budget; budget < 0 means unlimited. It
// reports false when the value nests deeper than the budget.
func cloneDepth(v any, budget int) (any, bool) {
	if budget == 0 {
		switch v.(type) {
		case map[string]any, []any:
			return nil, false
		}
	}
	switch x := v.(type) {
	case nil, string, bool, float64:
		return v, true
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			c, ok := cloneDepth(e, budget-1)
			if !ok {
				return nil, false
			}
			m[k] = c
		}
		return m, true
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			c, ok := cloneDepth(e, budget-1)
			if !ok {
				return nil, false
			}
			s[i] = c
		}
		return s, true
	case json.Number:
		if n, ok := jsonnum.Normal(string(x)); ok {
			return n, true
		}
		return v, true
	case int:
		return jsonnum.FromInt(int64(x)), true
	case int64:
		return jsonnum.FromInt(x), true
	case int32:
		return float64(x), true
	case float32:
		return float64(x), true
	case uint:
		return jsonnum.FromUint(uint64(x)), true
	case uint64:
		return jsonnum.FromUint(x), true
	}
	c := cloneViaJSON(v)
	if _, isMap := c.(map[string]any); isMap || isSlice(c) {
		return cloneDepth(c, budget)
	}
	return c, true
}

// isNormal reports whether v is already what clone would make of it (maps,
// slices, strings, float64s, booleans and nil only), nesting at most
// budget levels deep.
func isNormal(v any, budget int) bool {
	switch x := v.(type) {
	case nil, string, bool, float64:
		return true
	case json.Number:
		return jsonnum.IsBigInteger(string(x))
	case map[string]any:
		return budget > 0 && allNormal(maps.Values(x), budget-1)
	case []any:
		return budget > 0 && allNormal(slices.Values(x), budget-1)
	}
	return false
}

// withinSteps reports whether checking v applies at most MaxCheckSteps
// schemas, when steps[k] are applied to each part of v k levels deep (v
// nests no deeper than steps has levels).
func withinSteps(v any, steps []int) bool {
	total := 0
	var walk func(v any, k int) bool
	walk = func(v any, k int) bool {
		if total += steps[k]; total > MaxCheckSteps {
			return false
		}
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				if !walk(e, k+1) {
					return false
				}
			}
		case []any:
			for _, e := range x {
				if !walk(e, k+1) {
					return false
				}
			}
		}
		return true
	}
	return walk(v, 0)
}

func allNormal(values iter.Seq[any], budget int) bool {
	for e := range values {
		if !isNormal(e, budget) {
			return false
		}
	}
	return true
}

func isSlice(v any) bool { _, ok := v.([]any); return ok }

func cloneViaJSON(v any) any {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}

// jsType reports the JSON type of a normalized value, as JSON Schema names
// it; whole numbers report "integer".
func jsType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "integer"
		}
		return "number"
	case json.Number:
		if jsonnum.IsBigInteger(string(x)) {
			return "integer"
		}
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "invalid"
}

// typeSet is a set of JSON Schema type names, one bit each, so that a
// schema's allowed types are tested without comparing strings.
type typeSet uint8

const (
	setNull typeSet = 1 << iota
	setBoolean
	setString
	setInteger
	setNumber
	setObject
	setArray
)

// typesOf returns the set of the named types (unknown names add nothing).
func typesOf(names []string) typeSet {
	var s typeSet
	for _, n := range names {
		switch n {
		case "null":
			s |= setNull
		case "boolean":
			s |= setBoolean
		case "string":
			s |= setString
		case "integer":
			s |= setInteger
		case "number":
			s |= setNumber
		case "object":
			s |= setObject
		case "array":
			s |= setArray
		}
	}
	return s
}

// typeOf returns the types a normalized value has: a whole number is both
// an integer and a number. It returns 0 for a value that is not JSON.
func typeOf(v any) typeSet {
	switch x := v.(type) {
	case nil:
		return setNull
	case bool:
		return setBoolean
	case string:
		return setString
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return setInteger | setNumber
		}
		return setNumber
	case json.Number:
		if jsonnum.IsBigInteger(string(x)) { // an integer beyond ±2^53
			return setInteger | setNumber
		}
	case map[string]any:
		return setObject
	case []any:
		return setArray
	}
	return 0
}

// jsNumber parses a string the way JavaScript's Number() does for the
// inputs a model sends: surrounding white space is ignored, and decimal,
// exponent and 0x/0o/0b forms are accepted.
func jsNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if len(s) > 2 && s[0] == '0' {
		base := 0
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			if strings.ContainsAny(s[2:], "_+-") {
				return 0, false
			}
			n, err := strconv.ParseUint(s[2:], base, 64)
			return float64(n), err == nil
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return f, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// jsString formats a number the way JavaScript's String() does.
func jsString(f float64) string {
	switch {
	case f == 0:
		return "0"
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[0]
		exp = strings.TrimLeft(exp[1:], "0")
		return mant + "e" + string(sign) + exp
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// googleView returns v with its json.Numbers as float64s, for
// google/jsonschema-go's validator, which types a json.Number as a string.
// It copies only what holds one.
func googleView(v any) any {
	g, _ := viewOf(v)
	return g
}

func viewOf(v any) (any, bool) {
	switch x := v.(type) {
	case json.Number:
		return jsonnum.Float(x), true
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if g, changed := viewOf(e); changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = g
			}
		}
		if out != nil {
			return out, true
		}
	case []any:
		var out []any
		for i, e := range x {
			if g, changed := viewOf(e); changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = g
			}
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

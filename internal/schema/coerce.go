package schema

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/agentloop/agentloop/internal/jsonnum"
)

// coerce converts v toward the schema n, following the reference's rules
// for plain JSON Schemas: allOf coerces through each member; anyOf and
// oneOf take the first member whose coercion validates; a type (or type
// list) converts primitives; objects and arrays are walked. Unlike the
// reference, $ref is followed. v must be normalized (see clone).
//
// coerce never changes v: a map or slice with an element to change is
// copied, shallowly, and the copy changed, so a value that needs nothing
// costs nothing and the result shares what did not change with v. It
// reports whether the result differs from v.
func coerce(v any, n *node) (any, bool) {
	if n == nil {
		return v, false
	}
	changed := false
	if n.ref != nil {
		if c, ok := coerce(v, n.ref); ok {
			v, changed = c, true
		}
	}
	for _, m := range n.allOf {
		if c, ok := coerce(v, m); ok {
			v, changed = c, true
		}
	}
	if len(n.anyOf) > 0 {
		if c, ok := coerceUnion(v, n.anyOf); ok {
			v, changed = c, true
		}
	}
	if len(n.oneOf) > 0 {
		if c, ok := coerceUnion(v, n.oneOf); ok {
			v, changed = c, true
		}
	}
	if len(n.types) > 0 && !(len(n.types) > 1 && typeOf(v)&n.typeSet != 0) {
		for _, t := range n.types {
			if c, ok := coercePrimitive(v, t); ok {
				v, changed = c, true
				break
			}
		}
	}
	switch x := v.(type) {
	case map[string]any:
		if n.typeSet&setObject != 0 {
			if c, ok := coerceObject(x, n); ok {
				v, changed = c, true
			}
		}
	case []any:
		if n.typeSet&setArray != 0 {
			if c, ok := coerceArray(x, n); ok {
				v, changed = c, true
			}
		}
	}
	return v, changed
}

func coerceUnion(v any, members []*node) (any, bool) {
	for _, m := range members {
		if c, ok := coerce(v, m); m.valid(c) {
			return c, ok
		}
	}
	return v, false
}

func coerceObject(obj map[string]any, n *node) (any, bool) {
	var out map[string]any // a copy of obj, from the first change on
	set := func(k string, c any) {
		if out == nil {
			out = maps.Clone(obj)
		}
		out[k] = c
	}
	for i, k := range n.keys {
		if e, ok := obj[k]; ok {
			if c, ok := coerce(e, n.propList[i]); ok {
				set(k, c)
			}
		}
	}
	if n.addl != nil {
		for k, e := range obj {
			if _, declared := n.props[k]; !declared {
				if c, ok := coerce(e, n.addl); ok {
					set(k, c)
				}
			}
		}
	}
	if out == nil {
		return obj, false
	}
	return out, true
}

func coerceArray(arr []any, n *node) (any, bool) {
	var out []any // a copy of arr, from the first change on
	set := func(i int, c any) {
		if out == nil {
			out = slices.Clone(arr)
		}
		out[i] = c
	}
	switch {
	case len(n.prefix) > 0:
		for i := range min(len(arr), len(n.prefix)) {
			if c, ok := coerce(arr[i], n.prefix[i]); ok {
				set(i, c)
			}
		}
	case n.items != nil:
		for i, e := range arr {
			if c, ok := coerce(e, n.items); ok {
				set(i, c)
			}
		}
	}
	if out == nil {
		return arr, false
	}
	return out, true
}

// coercePrimitive converts v to the primitive type t when the reference's
// rules allow it, and reports whether it changed v.
func coercePrimitive(v any, t string) (any, bool) {
	switch t {
	case "number", "integer":
		switch x := v.(type) {
		case nil:
			return 0.0, true
		case bool:
			if x {
				return 1.0, true
			}
			return 0.0, true
		case string:
			if t := strings.TrimSpace(x); jsonnum.IsBigInteger(t) {
				return json.Number(t), true // exactly, not rounded to a float64
			}
			f, ok := jsNumber(x)
			if !ok || math.IsInf(f, 0) || (t == "integer" && f != math.Trunc(f)) {
				return v, false
			}
			return f, true
		}
	case "boolean":
		switch x := v.(type) {
		case nil:
			return false, true
		case string:
			switch x {
			case "true":
				return true, true
			case "false":
				return false, true
			}
		case float64:
			switch x {
			case 1:
				return true, true
			case 0:
				return false, true
			}
		}
	case "string":
		switch x := v.(type) {
		case nil:
			return "", true
		case float64:
			return jsString(x), true
		case json.Number: // an integer beyond ±2^53: its digits, as JavaScript's String() writes a BigInt
			return string(x), true
		case bool:
			if x {
				return "true", true
			}
			return "false", true
		}
	case "null":
		switch x := v.(type) {
		case string:
			if x == "" {
				return nil, true
			}
		case float64:
			if x == 0 {
				return nil, true
			}
		case bool:
			if !x {
				return nil, true
			}
		}
	}
	return v, false
}

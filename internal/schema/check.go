package schema

import (
	"encoding/json"
	"math"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentloop/agentloop/internal/jsonnum"
)

// A Violation is one way a value fails its schema.
type Violation struct {
	// Path locates the value: property names and array indexes joined by
	// dots ("edits.0.oldText"), "root" for the arguments as a whole. For a
	// missing required property it is the path of that property.
	Path string
	// Message says what is wrong, in the reference's wording
	// ("must be integer", "must have required properties path").
	Message string
}

// checker walks a value against a compiled schema and collects violations.
// With first set it stops at the first one (a plain validity test).
type checker struct {
	path  []string
	out   []Violation
	first bool
}

func (n *node) valid(v any) bool {
	c := checker{first: true}
	c.check(v, n)
	return len(c.out) == 0
}

func (n *node) violations(v any) []Violation {
	var c checker
	c.check(v, n)
	return c.out
}

func (c *checker) done() bool { return c.first && len(c.out) > 0 }

func (c *checker) add(msg string, extra ...string) {
	p := c.path
	if len(extra) > 0 {
		p = append(p[:len(p):len(p)], extra...)
	}
	path := strings.Join(p, ".")
	if path == "" {
		path = "root"
	}
	c.out = append(c.out, Violation{Path: path, Message: msg})
}

func (c *checker) check(v any, n *node) {
	if n == nil || c.done() {
		return
	}
	if n.ref != nil {
		c.check(v, n.ref)
	}
	// A type error does not stop the other checks: like the reference,
	// keywords for the value's actual type and enum/const still report.
	got := typeOf(v)
	if len(n.types) > 0 && got&n.typeSet == 0 {
		if len(n.types) == 1 {
			c.add("must be " + n.types[0])
		} else {
			c.add("must be either " + strings.Join(n.types, " or "))
		}
	}
	if got == 0 {
		c.add("must be a JSON value")
		return
	}
	switch x := v.(type) {
	case float64:
		c.number(x, n)
	case json.Number: // an integer beyond ±2^53: bounds compare as float64, as google's do
		c.number(jsonnum.Float(x), n)
	case string:
		c.string(x, n)
	case []any:
		c.array(x, n)
	case map[string]any:
		c.object(x, n)
	}
	if n.konst != nil && !containsValue(n.konst, v) {
		c.add("must be equal to constant")
	}
	if n.enum != nil && !containsValue(n.enum, v) {
		c.add("must be equal to one of the allowed values")
	}
	for _, m := range n.allOf {
		c.check(v, m)
	}
	if len(n.anyOf) > 0 && !c.done() {
		c.union(v, n.anyOf, false)
	}
	if len(n.oneOf) > 0 && !c.done() {
		c.union(v, n.oneOf, true)
	}
	if n.not != nil && n.not.valid(v) {
		c.add("must not be valid")
	}
	if n.cond != nil && !c.done() {
		c.conditional(v, n)
	}
}

func (c *checker) union(v any, members []*node, exactlyOne bool) {
	var nested []Violation
	matched := 0
	for _, m := range members {
		sub := checker{path: c.path}
		sub.check(v, m)
		if len(sub.out) == 0 {
			matched++
		} else {
			nested = append(nested, sub.out...)
		}
	}
	switch {
	case !exactlyOne && matched > 0, exactlyOne && matched == 1:
		return
	case exactlyOne && matched > 1:
		c.add("must match exactly one schema in oneOf")
		return
	}
	c.out = append(c.out, nested...)
	if exactlyOne {
		c.add("must match exactly one schema in oneOf")
	} else {
		c.add("must match a schema in anyOf")
	}
}

func (c *checker) conditional(v any, n *node) {
	branch := n.els
	if n.cond.valid(v) {
		branch = n.then
	}
	c.check(v, branch)
}

func (c *checker) number(f float64, n *node) {
	s := n.s
	if s.ExclusiveMaximum != nil && f >= *s.ExclusiveMaximum {
		c.add("must be < " + jsString(*s.ExclusiveMaximum))
	}
	if s.ExclusiveMinimum != nil && f <= *s.ExclusiveMinimum {
		c.add("must be > " + jsString(*s.ExclusiveMinimum))
	}
	if s.Maximum != nil && f > *s.Maximum {
		c.add("must be <= " + jsString(*s.Maximum))
	}
	if s.Minimum != nil && f < *s.Minimum {
		c.add("must be >= " + jsString(*s.Minimum))
	}
	if m := s.MultipleOf; m != nil && !isMultiple(f, *m) {
		c.add("must be multiple of " + jsString(*m))
	}
}

// isMultiple decides multipleOf as google/jsonschema-go does: the quotient
// in float64 must have no fractional part (so 0.0075 is a multiple of
// 0.0001, and nothing is a multiple of 0).
func isMultiple(f, m float64) bool {
	_, frac := math.Modf(f / m)
	return frac == 0
}

func (c *checker) string(x string, n *node) {
	s := n.s
	if s.MinLength != nil || s.MaxLength != nil {
		l := utf8.RuneCountInString(x)
		if s.MaxLength != nil && l > *s.MaxLength {
			c.add("must not have more than " + itoa(*s.MaxLength) + " characters")
		}
		if s.MinLength != nil && l < *s.MinLength {
			c.add("must not have fewer than " + itoa(*s.MinLength) + " characters")
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(x) {
		c.add(`must match pattern "` + s.Pattern + `"`)
	}
}

func (c *checker) array(a []any, n *node) {
	s := n.s
	rest := 0
	for i, p := range n.prefix {
		if i >= len(a) {
			break
		}
		c.atIndex(i, a[i], p)
		rest = i + 1
	}
	if n.items != nil {
		for i := rest; i < len(a) && !c.done(); i++ {
			c.atIndex(i, a[i], n.items)
		}
	}
	if s.MaxItems != nil && len(a) > *s.MaxItems {
		c.add("must not have more than " + itoa(*s.MaxItems) + " items")
	}
	if s.MinItems != nil && len(a) < *s.MinItems {
		c.add("must not have fewer than " + itoa(*s.MinItems) + " items")
	}
	if s.UniqueItems && hasDuplicate(a) {
		c.add("must not have duplicate items")
	}
	if n.contains != nil {
		c.contains(a, n)
	}
}

func (c *checker) contains(a []any, n *node) {
	s := n.s
	found := 0
	for _, e := range a {
		if n.contains.valid(e) {
			found++
		}
	}
	want := 1
	if s.MinContains != nil {
		want = *s.MinContains
	}
	if found < want {
		c.add("must contain at least " + itoa(want) + " valid item")
	}
	if s.MaxContains != nil && found > *s.MaxContains {
		c.add("must contain at most " + itoa(*s.MaxContains) + " valid items")
	}
}

// inlineProps is how many declared properties an object check looks up
// once, up front, into arrays on the stack.
const inlineProps = 16

func (c *checker) object(obj map[string]any, n *node) {
	s := n.s
	// Look each declared property up once; the required check and the
	// property checks share the answers.
	var vals [inlineProps]any
	var has [inlineProps]bool
	inline := len(n.keys) <= inlineProps
	if inline {
		for i, k := range n.keys {
			vals[i], has[i] = obj[k]
		}
	}
	present := func(i int, name string) (any, bool) {
		if inline && i >= 0 {
			return vals[i], has[i]
		}
		e, ok := obj[name]
		return e, ok
	}
	var missing []string
	for i, r := range s.Required {
		if _, ok := present(n.reqAt[i], r); !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		c.add("must have required properties "+strings.Join(missing, ", "), missing[0])
	}
	if c.hasBadExtra(obj, n) {
		// Reported at the object, whether additionalProperties is false or
		// a schema the extra property fails, as the reference does.
		c.add("must not have additional properties")
	}
	for i, k := range n.keys {
		if e, ok := present(i, k); ok {
			c.at(k, e, n.propList[i])
		}
	}
	if len(n.patterns) > 0 {
		for _, k := range sortedKeys(obj) {
			for re, p := range n.patterns {
				if re.MatchString(k) {
					c.at(k, obj[k], p)
				}
			}
		}
	}
	if s.MaxProperties != nil && len(obj) > *s.MaxProperties {
		c.add("must not have more than " + itoa(*s.MaxProperties) + " properties")
	}
	if s.MinProperties != nil && len(obj) < *s.MinProperties {
		c.add("must not have fewer than " + itoa(*s.MinProperties) + " properties")
	}
	for _, prop := range sortedKeys(s.DependentRequired) {
		if _, ok := obj[prop]; !ok {
			continue
		}
		var absent []string
		for _, d := range s.DependentRequired[prop] {
			if _, ok := obj[d]; !ok {
				absent = append(absent, d)
			}
		}
		if len(absent) > 0 {
			c.add("must have properties " + strings.Join(absent, ", ") + " when property " + prop + " is present")
		}
	}
	if n.names != nil {
		var bad []string
		for _, k := range sortedKeys(obj) {
			if !n.names.valid(k) {
				bad = append(bad, k)
			}
		}
		if len(bad) > 0 {
			c.add("property names " + strings.Join(bad, ", ") + " are invalid")
		}
	}
}

// hasBadExtra reports an undeclared property (matching no pattern) that
// additionalProperties refuses.
func (c *checker) hasBadExtra(obj map[string]any, n *node) bool {
	if !n.addlNo && n.addl == nil {
		return false
	}
	for k, e := range obj {
		if _, declared := n.props[k]; declared || matchesPattern(n, k) {
			continue
		}
		if n.addlNo || !n.addl.valid(e) {
			return true
		}
	}
	return false
}

func matchesPattern(n *node, k string) bool {
	for re := range n.patterns {
		if re.MatchString(k) {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// at checks v, found at seg below the current path, against n. A plain
// validity test keeps no path.
func (c *checker) at(seg string, v any, n *node) {
	if c.first {
		c.check(v, n)
		return
	}
	c.path = append(c.path, seg)
	c.check(v, n)
	c.path = c.path[:len(c.path)-1]
}

// atIndex is at for an array element.
func (c *checker) atIndex(i int, v any, n *node) {
	if c.first {
		c.check(v, n)
		return
	}
	c.at(itoa(i), v, n)
}

func containsValue(list []any, v any) bool {
	for _, e := range list {
		if equalJSON(e, v) {
			return true
		}
	}
	return false
}

// equalJSON reports whether two normalized JSON values are equal.
func equalJSON(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case float64, json.Number:
		// Numbers compare as float64s, as google/jsonschema-go compares
		// them (a schema's own numbers reach it as float64s).
		fx, okx := asFloat(x)
		fy, oky := asFloat(b)
		return okx && oky && fx == fy
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	}
	return reflect.DeepEqual(a, b)
}

func hasDuplicate(a []any) bool {
	for i := range a {
		for j := i + 1; j < len(a); j++ {
			if equalJSON(a[i], a[j]) {
				return true
			}
		}
	}
	return false
}

func itoa(i int) string { return jsString(float64(i)) }

// asFloat returns a number's float64; big integers round.
func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		return jsonnum.Float(x), true
	}
	return 0, false
}

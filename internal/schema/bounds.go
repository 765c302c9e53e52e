package schema

import "fmt"

// The bounds on a tool's schema and on checking a call's arguments. A
// schema is read, resolved and measured when it is compiled (when the
// tool is built), without recursion on the goroutine's stack, so that no
// schema and no arguments can make a check recurse without end: a Go stack
// overflow kills the process and cannot be recovered.
const (
	// MaxSchemaDepth is how deeply a schema's JSON text may nest. A deeper
	// schema is refused when the tool is built.
	MaxSchemaDepth = 10000

	// MaxArgumentDepth is how deeply a call's arguments may nest (objects
	// and arrays inside each other). Deeper arguments are refused without
	// walking further, with an [*Invalid] at the root ("must not
	// nest objects and arrays more than 100 levels deep").
	MaxArgumentDepth = 100

	// MaxCheckDepth bounds how many schemas a check applies one within
	// another: every reference followed ($ref, $dynamicRef), every
	// applicator entered (allOf, anyOf, oneOf, not, if/then/else,
	// dependentSchemas) and every level of the value descended into
	// (properties, items, ...) counts one. A schema in which some chain of
	// references and applicators alone goes deeper, or that could not check
	// even arguments with one property, is refused when the tool is built;
	// a call whose arguments nest deeply enough to go deeper (against
	// a recursive schema, say) fails before anything is checked, with the
	// error [ErrCheckLimit] (package tools: CheckLimitText).
	MaxCheckDepth = 1000

	// MaxCheckSteps bounds how many times one check may apply a schema to
	// a part of the value, counted before the check as if every reference
	// and applicator applied (anyOf and oneOf members count twice:
	// coercion tries a member, then checks it). A schema in which some
	// schema alone would apply more (references that fan out and join
	// again, level after level) is refused when the tool is built; a call
	// whose arguments would take more fails before anything is checked,
	// with [ErrCheckLimit] (package tools: CheckLimitText). Schemas that
	// apply at most a few schemas to each part of any value are never
	// counted: their checks cost time linear in the arguments.
	MaxCheckSteps = 1_000_000
)

// stepsFree is how many schemas a schema may apply to each part of a value
// for its checks to go uncounted (see MaxCheckSteps).
const stepsFree = 8

// errSchemaTooCostly refuses a schema that applies more than
// MaxCheckSteps schemas to every value.
var errSchemaTooCostly = fmt.Errorf("checking a value against the schema could apply more than %d schemas", MaxCheckSteps)

// errSchemaTooDeep refuses a schema that goes deeper than MaxCheckDepth
// for every value.
var errSchemaTooDeep = fmt.Errorf("checking a value against the schema could apply more than %d schemas one within another", MaxCheckDepth)

package schema

import "testing"

// BenchmarkGoogleValidate is google/jsonschema-go's Validate alone on an
// already coerced value: what each call would cost on top of coercion if
// google judged it (it does for schemas the checker does not decide).
func BenchmarkGoogleValidate(b *testing.B) {
	s := mustCompile(b, benchSchema)
	v := map[string]any{"path": "src/file1.go", "line": 42.0, "mode": "r"}
	for b.Loop() {
		if err := s.resolved.Validate(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheck is the compiled checker on the same call, with one value
// ("42" for an integer) to coerce.
func BenchmarkCheck(b *testing.B) {
	s := mustCompile(b, benchSchema)
	v := map[string]any{"path": "src/file1.go", "line": "42", "mode": "r"}
	for b.Loop() {
		if _, err := s.Check(v); err != nil {
			b.Fatal(err)
		}
	}
}

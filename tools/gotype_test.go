package tools

import (
	"context"
	"math/big"
	"testing"
	"time"
	"unsafe"
)

type hiddenArgs struct {
	city string
	days int
}

type callbackArgs struct {
	City     string
	Callback func(string) error
}

type innerHidden struct{ n int }

type nestedArgs struct {
	Steps []struct {
		Name string
		Done chan struct{}
	}
}

type embeddedInner struct {
	City string `json:"city"`
}

type embeddedArgs struct {
	embeddedInner
	secret string
}

type recursiveArgs struct {
	Name string
	Kids []recursiveArgs
	Next *recursiveArgs
}

// The unexported fields above exist to be unexported: the model cannot
// fill them.
var _ = []any{hiddenArgs{city: "Oslo", days: 1}, innerHidden{n: 1}, embeddedArgs{secret: "s"}}

// buildErr is the error New gives for a body over In, or "".
func buildErr[In any]() string {
	_, err := New(Config{Name: "t"}, func(context.Context, In) (string, error) { return "", nil })
	if err != nil {
		return err.Error()
	}
	return ""
}

// TestStructMistakesRefused: a struct tool the model could not fill is
// refused when it is built, with an error that names the field (by its Go
// path) and says what to do, word for word; what JSON can hold, or what
// a tag leaves out, builds.
func TestStructMistakesRefused(t *testing.T) {
	const tag = "; tag the field `json:\"-\"` to leave it out of the tool's arguments"
	for _, tc := range []struct {
		name, got, want string
	}{
		{"unexported fields only", buildErr[hiddenArgs](),
			`tools: tool "t": hiddenArgs has no exported fields, so JSON would drop whatever the model sends: export the fields the model should fill, or use struct{} for a tool without arguments`},
		{"a func field", buildErr[callbackArgs](),
			`tools: tool "t": field callbackArgs.Callback: JSON cannot hold its type func(string) error` + tag},
		{"a chan in a slice of structs", buildErr[nestedArgs](),
			`tools: tool "t": field nestedArgs.Steps.Done: JSON cannot hold its type chan struct {}` + tag},
		{"a pointer to a func", buildErr[struct{ F *func() }](), `tools: tool "t": field arguments.F: JSON cannot hold its type func()` + tag},
		{"a slice of chans", buildErr[struct{ C []chan int }](), `tools: tool "t": field arguments.C: JSON cannot hold its type []chan int` + tag},
		{"a complex field", buildErr[struct{ Z complex128 }](), `tools: tool "t": field arguments.Z: JSON cannot hold its type complex128` + tag},
		{"an unsafe.Pointer", buildErr[struct{ P unsafe.Pointer }](), `tools: tool "t": field arguments.P: JSON cannot hold its type unsafe.Pointer` + tag},
		{"an interface with methods", buildErr[struct{ E error }](), `tools: tool "t": field arguments.E: JSON cannot hold its type error` + tag},
		{"a map with bool keys", buildErr[struct{ M map[bool]int }](), `tools: tool "t": field arguments.M: JSON cannot hold its type map[bool]int` + tag},
		{"a map of funcs", buildErr[struct{ M map[string]func() }](), `tools: tool "t": field arguments.M: JSON cannot hold its type map[string]func()` + tag},
		{"a nested struct with unexported fields only", buildErr[struct{ In innerHidden }](),
			`tools: tool "t": field arguments.In: its type tools.innerHidden has no exported fields, so JSON would drop whatever the model sends in it: export the fields the model should fill` +
				", or tag the field `json:\"-\"` to leave it out of the tool's arguments"},

		{"struct{}", buildErr[struct{}](), ""},
		{"a func tagged out", buildErr[struct {
			City     string
			Callback func() `json:"-"`
		}](), ""},
		{"only tagged-out fields", buildErr[struct {
			C chan int `json:"-"`
		}](), ""},
		{"an embedded struct's fields", buildErr[embeddedArgs](), ""},
		{"types that decode themselves", buildErr[struct {
			When time.Time
			N    *big.Int
		}](), ""},
		{"a recursive type", buildErr[recursiveArgs](), ""},
		{"maps with integer keys, and any", buildErr[struct {
			M map[int]string
			A any
			B []byte
		}](), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, tc.got, tc.want)
		}
	}
}

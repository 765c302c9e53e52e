package httpx

import (
	"errors"
	"fmt"
	"strings"
)

// ErrKeyHeader is extra headers that set the header a provider sends its
// key in; a provider refuses them before any request.
var ErrKeyHeader = errors.New("a header that carries the key")

// CheckHeaders reports a header of headers named keyHeader (in any case):
// the key has one place (the provider's APIKey, or the call's
// providers.Request.APIKey), and such a header beside it would silently
// win over a GetAPIKey hook's key and escape what keeps the key out of
// errors. The error names the header, never its value.
func CheckHeaders(headers map[string]string, keyHeader string) error {
	for name := range headers {
		if strings.EqualFold(strings.TrimSpace(name), keyHeader) {
			return fmt.Errorf("%w: Options.Headers sets %s, which carries the key: give the key as Options.APIKey, or from a GetAPIKey hook", ErrKeyHeader, keyHeader)
		}
	}
	return nil
}

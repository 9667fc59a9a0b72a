package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SpecFile writes body (its leading newlines dropped) to a file name in a fresh temporary
// directory of the test and returns its path.
func SpecFile(t testing.TB, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(strings.TrimLeft(body, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// OperatorHeader starts an IstioOperator file: SpecFile(t, name, OperatorHeader+"spec: ...").
const OperatorHeader = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\n"

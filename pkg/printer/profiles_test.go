package printer

import (
	"bytes"
	"testing"
)

// profile dump prints the spec as YAML or JSON, or its --set lines (nothing for none).
func TestProfileDump(t *testing.T) {
	spec := map[string]any{"spec": map[string]any{"profile": "demo", "hub": "h"}}
	for _, tc := range []struct {
		f     Format
		spec  any
		flags []string
		want  string
	}{
		{YAML, spec, nil, "spec:\n  hub: h\n  profile: demo\n"},
		{JSON, spec, nil, "{\n  \"spec\": {\n    \"hub\": \"h\",\n    \"profile\": \"demo\"\n  }\n}\n"},
		{YAML, int64(7), nil, "7\n"},
		{Flags, spec, []string{"--set hub=h", "--set profile=demo"}, "--set hub=h\n--set profile=demo\n"},
		{Flags, map[string]any{}, nil, ""},
	} {
		var b bytes.Buffer
		if err := ProfileDump(&b, tc.f, tc.spec, tc.flags); err != nil {
			t.Fatalf("%s: %v", tc.f, err)
		}
		if b.String() != tc.want {
			t.Errorf("%s of %v: %q, want %q", tc.f, tc.spec, b.String(), tc.want)
		}
	}
}

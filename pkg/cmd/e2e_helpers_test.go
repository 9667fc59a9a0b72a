package cmd_test

import (
	"encoding/json"
	"fmt"
)

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func fmtSscanf(s, format string, a ...any) (int, error) { return fmt.Sscanf(s, format, a...) }

package main

import "testing"

func TestExpandRule(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`self != '*'`, `self != "*"`},
		{`self.substring(7,8) == '/'`, `self.substring(7, 8) == "/"`},
		{`self.all(key, key.size() != 0)`, `self.all(key, key.size() != 0)`},
		{`has(self.a) != has(self.b)`, `has(self.a) != has(self.b)`},
		{`oneof(self.a, self.b, self.c)`, `(has(self.a) ? 1 : 0) + (has(self.b) ? 1 : 0) + (has(self.c) ? 1 : 0) <= 1`},
		{`default(self.mode, 'NONE') == 'NONE'`, `(has(self.mode) ? self.mode : "NONE") == "NONE"`},
		{`default(self.list, []).size() <= 1`, `(has(self.list) ? self.list : []).size() <= 1`},
		{`self.index({}, a, b).size() > 0`, `((has(self.a) && has(self.a.b)) ? self.a.b : {}).size() > 0`},
	} {
		got, err := expandRule(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{`oneof(self)`, `default('a', 'b')`, `self.index({}, 'a')`, `self ==`} {
		if got, err := expandRule(bad); err == nil {
			t.Errorf("%s: no error, got %s", bad, got)
		}
	}
}

func TestQuoteRule(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`+kubebuilder:validation:XValidation:message="m",rule="self != ''"`, `+kubebuilder:validation:XValidation:message="m",rule="self != ''"`},
		{`+kubebuilder:validation:XValidation:message="m",rule="default(self.a, "").size() > 0"`, `+kubebuilder:validation:XValidation:message="m",rule="default(self.a, \"\").size() > 0"`},
		{`+kubebuilder:validation:MaxLength=3`, `+kubebuilder:validation:MaxLength=3`},
	} {
		if got := quoteRule(tc.in); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

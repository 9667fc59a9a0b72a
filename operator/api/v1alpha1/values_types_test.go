package v1alpha1

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// valuesSchemaTypes maps each message of the values proto to the Go type that models it.
var valuesSchemaTypes = map[string]reflect.Type{
	"Agentgateway":                     reflect.TypeFor[Agentgateway](),
	"ArchConfig":                       reflect.TypeFor[ArchConfig](),
	"BaseConfig":                       reflect.TypeFor[BaseConfig](),
	"CNIAmbientConfig":                 reflect.TypeFor[CNIAmbientConfig](),
	"CNIConfig":                        reflect.TypeFor[CNIConfig](),
	"CNIRepairConfig":                  reflect.TypeFor[CNIRepairConfig](),
	"CNIUsageConfig":                   reflect.TypeFor[CNIUsageConfig](),
	"DefaultPodDisruptionBudgetConfig": reflect.TypeFor[DefaultPodDisruptionBudgetConfig](),
	"DefaultResourcesConfig":           reflect.TypeFor[DefaultResourcesConfig](),
	"EgressGatewayConfig":              reflect.TypeFor[EgressGatewayConfig](),
	"ExperimentalConfig":               reflect.TypeFor[ExperimentalConfig](),
	"GatewaysConfig":                   reflect.TypeFor[GatewaysConfig](),
	"GlobalConfig":                     reflect.TypeFor[GlobalConfig](),
	"GlobalLoggingConfig":              reflect.TypeFor[GlobalLoggingConfig](),
	"IngressGatewayConfig":             reflect.TypeFor[IngressGatewayConfig](),
	"IstiodConfig":                     reflect.TypeFor[IstiodConfig](),
	"IstiodRemoteConfig":               reflect.TypeFor[IstiodRemoteConfig](),
	"MultiClusterConfig":               reflect.TypeFor[MultiClusterConfig](),
	"NetworkPolicyConfig":              reflect.TypeFor[NetworkPolicyConfig](),
	"OutboundTrafficPolicyConfig":      reflect.TypeFor[OutboundTrafficPolicyConfig](),
	"PilotConfig":                      reflect.TypeFor[PilotConfig](),
	"PilotIngressConfig":               reflect.TypeFor[PilotIngressConfig](),
	"PilotPolicyConfig":                reflect.TypeFor[PilotPolicyConfig](),
	"PilotTaintControllerConfig":       reflect.TypeFor[PilotTaintControllerConfig](),
	"PortsConfig":                      reflect.TypeFor[PortsConfig](),
	"ProxyConfig":                      reflect.TypeFor[ProxyConfig](),
	"ProxyInitConfig":                  reflect.TypeFor[ProxyInitConfig](),
	"ReaderServiceAccount":             reflect.TypeFor[ReaderServiceAccount](),
	"ResourceQuotas":                   reflect.TypeFor[ResourceQuotas](),
	"Resources":                        reflect.TypeFor[Resources](),
	"ResourcesRequestsConfig":          reflect.TypeFor[ResourcesRequestsConfig](),
	"SDSConfig":                        reflect.TypeFor[SDSConfig](),
	"STSConfig":                        reflect.TypeFor[STSConfig](),
	"SecretVolume":                     reflect.TypeFor[SecretVolume](),
	"ServiceAccount":                   reflect.TypeFor[ServiceAccount](),
	"SidecarInjectorConfig":            reflect.TypeFor[SidecarInjectorConfig](),
	"StartupProbe":                     reflect.TypeFor[StartupProbe](),
	"TargetUtilizationConfig":          reflect.TypeFor[TargetUtilizationConfig](),
	"TelemetryConfig":                  reflect.TypeFor[TelemetryConfig](),
	"TelemetryV2Config":                reflect.TypeFor[TelemetryV2Config](),
	"TelemetryV2PrometheusConfig":      reflect.TypeFor[TelemetryV2PrometheusConfig](),
	"TelemetryV2StackDriverConfig":     reflect.TypeFor[TelemetryV2StackDriverConfig](),
	"TracerConfig":                     reflect.TypeFor[TracerConfig](),
	"TracerDatadogConfig":              reflect.TypeFor[TracerDatadogConfig](),
	"TracerLightStepConfig":            reflect.TypeFor[TracerLightStepConfig](),
	"TracerStackdriverConfig":          reflect.TypeFor[TracerStackdriverConfig](),
	"TracerZipkinConfig":               reflect.TypeFor[TracerZipkinConfig](),
	"Values":                           reflect.TypeFor[Values](),
	"WaypointConfig":                   reflect.TypeFor[WaypointConfig](),
}

// externalMessages are proto messages modelled by a type from another package; their own
// fields are not compared (the kind "intorstring" covers how they are used).
var externalMessages = map[string]bool{"IntOrString": true}

// fixtureField is one line of testdata/values_fields.txt.
type fixtureField struct {
	line       int
	message    string
	json       string
	kind       string
	enum       []string
	deprecated bool
	// goType, when set, is the Go type (reflect's spelling) of a Kubernetes-typed field.
	goType string
}

func readFixture(path string) ([]fixtureField, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []fixtureField
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Fields(line)
		msg, name, ok := strings.Cut(parts[0], ".")
		if !ok || len(parts) < 2 {
			return nil, fmt.Errorf("%s:%d: malformed line %q", path, n, line)
		}
		ff := fixtureField{line: n, message: msg, json: name, kind: parts[1]}
		for _, p := range parts[2:] {
			switch {
			case p == "deprecated":
				ff.deprecated = true
			case strings.HasPrefix(p, "values="):
				ff.enum = strings.Split(strings.TrimPrefix(p, "values="), ",")
			case strings.HasPrefix(p, "go="):
				ff.goType = strings.TrimPrefix(p, "go=")
			default:
				return nil, fmt.Errorf("%s:%d: unknown attribute %q", path, n, p)
			}
		}
		out = append(out, ff)
	}
	return out, sc.Err()
}

var intOrStringType = reflect.TypeFor[intstr.IntOrString]()

// checkKind reports why t cannot hold a field of the given fixture kind, or "" if it can.
// elem is true for slice and map elements, which are stored by value.
func checkKind(types map[string]reflect.Type, t reflect.Type, kind string, elem bool) string {
	want := func(w reflect.Type) string {
		if t != w {
			return fmt.Sprintf("Go type %v, want %v for kind %q", t, w, kind)
		}
		return ""
	}
	scalar := func(v reflect.Type) string {
		if elem {
			return want(v)
		}
		return want(reflect.PointerTo(v))
	}
	switch kind {
	case "string", "duration", "enum":
		return want(reflect.TypeFor[string]())
	case "bool":
		return scalar(reflect.TypeFor[bool]())
	case "int":
		return scalar(reflect.TypeFor[int64]())
	case "float":
		return scalar(reflect.TypeFor[float64]())
	case "any":
		return want(reflect.TypeFor[any]())
	case "struct":
		return want(reflect.TypeFor[map[string]any]())
	case "intorstring":
		return scalar(intOrStringType)
	}
	if name, ok := strings.CutPrefix(kind, "message:"); ok {
		mt, known := types[name]
		if !known {
			return fmt.Sprintf("no Go type registered for message %s", name)
		}
		return scalar(mt)
	}
	if inner, ok := strings.CutPrefix(kind, "list:"); ok {
		if t.Kind() != reflect.Slice {
			return fmt.Sprintf("Go type %v, want a slice for kind %q", t, kind)
		}
		return checkKind(types, t.Elem(), inner, true)
	}
	if inner, ok := strings.CutPrefix(kind, "map:"); ok {
		if t.Kind() != reflect.Map || t.Key().Kind() != reflect.String {
			return fmt.Sprintf("Go type %v, want a map with string keys for kind %q", t, kind)
		}
		return checkKind(types, t.Elem(), inner, true)
	}
	return fmt.Sprintf("unknown fixture kind %q", kind)
}

// jsonFields indexes the exported fields of struct type t by JSON name.
func jsonFields(t reflect.Type) (map[string]reflect.StructField, []string) {
	byName := map[string]reflect.StructField{}
	var problems []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, ok := f.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		if !ok || name == "" || name == "-" {
			problems = append(problems, fmt.Sprintf("%s.%s: no JSON name", t.Name(), f.Name))
			continue
		}
		if opts != "omitempty" {
			problems = append(problems, fmt.Sprintf("%s.%s: json tag %q, want \",omitempty\" only", t.Name(), f.Name, tag))
		}
		if _, dup := byName[name]; dup {
			problems = append(problems, fmt.Sprintf("%s: JSON name %q used twice", t.Name(), name))
		}
		byName[name] = f
	}
	return byName, problems
}

// compareSchema lists every difference between the fixture and the Go types.
func compareSchema(fields []fixtureField, types map[string]reflect.Type, external map[string]bool) []string {
	var problems []string
	seen := map[string]map[string]bool{} // message -> JSON names listed in the fixture
	for _, ff := range fields {
		if seen[ff.message] == nil {
			seen[ff.message] = map[string]bool{}
		}
		if seen[ff.message][ff.json] {
			problems = append(problems, fmt.Sprintf("fixture line %d: %s.%s listed twice", ff.line, ff.message, ff.json))
		}
		seen[ff.message][ff.json] = true
	}
	index := map[string]map[string]reflect.StructField{}
	for msg, t := range types {
		if t.Kind() != reflect.Struct {
			problems = append(problems, fmt.Sprintf("%s: Go type %v is not a struct", msg, t))
			continue
		}
		if seen[msg] == nil {
			problems = append(problems, fmt.Sprintf("Go type %v is registered for %s, which the fixture does not list", t, msg))
		}
		byName, p := jsonFields(t)
		problems = append(problems, p...)
		index[msg] = byName
		for name, f := range byName {
			if seen[msg] != nil && !seen[msg][name] {
				problems = append(problems, fmt.Sprintf("%s.%s (JSON %q) is not in the fixture", t.Name(), f.Name, name))
			}
		}
	}
	for _, ff := range fields {
		if external[ff.message] {
			continue
		}
		byName, ok := index[ff.message]
		if !ok {
			if _, registered := types[ff.message]; !registered {
				problems = append(problems, fmt.Sprintf("fixture line %d: no Go type registered for message %s", ff.line, ff.message))
			}
			continue
		}
		f, ok := byName[ff.json]
		if !ok {
			problems = append(problems, fmt.Sprintf("fixture line %d: %s has no field with JSON name %q", ff.line, types[ff.message].Name(), ff.json))
			continue
		}
		where := fmt.Sprintf("%s.%s (JSON %q)", types[ff.message].Name(), f.Name, ff.json)
		switch {
		case ff.goType != "":
			if got := f.Type.String(); got != ff.goType {
				problems = append(problems, fmt.Sprintf("%s: Go type %s, want the Kubernetes type %s", where, got, ff.goType))
			}
		default:
			if p := checkKind(types, f.Type, ff.kind, false); p != "" {
				problems = append(problems, where+": "+p)
			}
		}
		var gotEnum []string
		if tag, ok := f.Tag.Lookup("enum"); ok {
			gotEnum = strings.Split(tag, ",")
		}
		if (ff.kind == "enum") != (gotEnum != nil) || !slices.Equal(gotEnum, ff.enum) {
			problems = append(problems, fmt.Sprintf("%s: enum tag %q, want %q", where, f.Tag.Get("enum"), strings.Join(ff.enum, ",")))
		}
		if got := f.Tag.Get("deprecated"); (got == "true") != ff.deprecated || (got != "" && got != "true") {
			problems = append(problems, fmt.Sprintf("%s: deprecated tag %q, fixture deprecated=%v", where, got, ff.deprecated))
		}
	}
	return problems
}

func TestValuesSchemaMatchesProto(t *testing.T) {
	const path = "testdata/values_fields.txt"
	fields, err := readFixture(path)
	if err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	messages := map[string]bool{}
	for _, ff := range fields {
		messages[ff.message] = true
	}
	// Guard against a truncated or emptied fixture passing vacuously.
	if len(messages) != 50 || len(fields) != 345 {
		t.Fatalf("%s: %d messages and %d fields, want 50 and 345", path, len(messages), len(fields))
	}
	problems := compareSchema(fields, valuesSchemaTypes, externalMessages)
	slices.Sort(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCompareSchemaDetectsDrift proves the comparison can fail.
func TestCompareSchemaDetectsDrift(t *testing.T) {
	type Inner struct {
		A string `json:"a,omitempty"`
	}
	type renamed struct {
		X *bool `json:"y,omitempty"`
	}
	type wrongType struct {
		X bool `json:"x,omitempty"`
	}
	type missingEnum struct {
		X string `json:"x,omitempty"`
	}
	type notDeprecated struct {
		X *int64 `json:"x,omitempty"`
	}
	type sliceOfPointers struct {
		X []*Inner `json:"x,omitempty"`
	}
	type extraField struct {
		X *bool `json:"x,omitempty"`
		Z *bool `json:"z,omitempty"`
	}
	type noOmitempty struct {
		X *bool `json:"x"`
	}
	inner := fixtureField{message: "Inner", json: "a", kind: "string"}
	cases := []struct {
		name  string
		typ   reflect.Type
		field fixtureField
	}{
		{"renamed JSON tag", reflect.TypeFor[renamed](), fixtureField{json: "x", kind: "bool"}},
		{"non-pointer scalar", reflect.TypeFor[wrongType](), fixtureField{json: "x", kind: "bool"}},
		{"missing enum tag", reflect.TypeFor[missingEnum](), fixtureField{json: "x", kind: "enum", enum: []string{"A", "B"}}},
		{"missing deprecated tag", reflect.TypeFor[notDeprecated](), fixtureField{json: "x", kind: "int", deprecated: true}},
		{"slice of pointers", reflect.TypeFor[sliceOfPointers](), fixtureField{json: "x", kind: "list:message:Inner"}},
		{"field not in proto", reflect.TypeFor[extraField](), fixtureField{json: "x", kind: "bool"}},
		{"json tag without omitempty", reflect.TypeFor[noOmitempty](), fixtureField{json: "x", kind: "bool"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.field.message = "M"
			types := map[string]reflect.Type{"M": tc.typ, "Inner": reflect.TypeFor[Inner]()}
			if p := compareSchema([]fixtureField{tc.field, inner}, types, nil); len(p) == 0 {
				t.Errorf("no problem reported for %v", tc.typ)
			}
		})
	}
	ok := struct {
		X []Inner `json:"x,omitempty" deprecated:"true"`
	}{}
	types := map[string]reflect.Type{"M": reflect.TypeOf(ok), "Inner": reflect.TypeFor[Inner]()}
	good := fixtureField{message: "M", json: "x", kind: "list:message:Inner", deprecated: true}
	if p := compareSchema([]fixtureField{good, inner}, types, nil); len(p) != 0 {
		t.Errorf("matching schema reported problems: %v", p)
	}
}

func TestValuesJSONShape(t *testing.T) {
	const doc = `{
		"global": {"proxy_init": {"image": "proxyv2"}, "tag": 1.30, "resourceScope": "cluster"},
		"gateways": {"istio-ingressgateway": {"rollingMaxSurge": "25%", "ports": [{"port": 80}]}},
		"pilot": {"rollingMaxUnavailable": 1, "traceSampling": 0.5},
		"istioCni": {"enabled": false}
	}`
	var v Values
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	if v.Global.ProxyInit.Image != "proxyv2" || v.Global.ResourceScope != "cluster" {
		t.Errorf("global = %+v", v.Global)
	}
	if got := v.Gateways.IstioIngressgateway.RollingMaxSurge; got == nil || *got != intstr.FromString("25%") {
		t.Errorf("rollingMaxSurge = %v", got)
	}
	if got := v.Pilot.RollingMaxUnavailable; got == nil || *got != intstr.FromInt32(1) {
		t.Errorf("rollingMaxUnavailable = %v", got)
	}
	if got := v.Gateways.IstioIngressgateway.Ports; len(got) != 1 || got[0].Port == nil || *got[0].Port != 80 {
		t.Errorf("ports = %+v", got)
	}
	if v.IstioCni == nil || v.IstioCni.Enabled == nil || *v.IstioCni.Enabled {
		t.Errorf("istioCni.enabled should be an explicit false, got %+v", v.IstioCni)
	}
	out, err := json.Marshal(Values{Global: &GlobalConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"global":{}}` {
		t.Errorf("empty values marshal to %s, want {\"global\":{}}", out)
	}
}

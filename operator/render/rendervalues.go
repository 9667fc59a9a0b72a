package render

import (
	"fmt"
	"log"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// renderValues is chartutil.ToRenderValues for vals the render owns (Values builds them
// afresh for each instance): Helm copies both them and the chart's values through
// reflection (copystructure) before merging, the render's costliest copy. Here only the
// chart's values are copied, by a plain walk of their maps and lists (deepCopyMap), and
// merged as Helm's coalescing does. A chart with subcharts goes through Helm.
func renderValues(ch *chart.Chart, vals map[string]any, opts chartutil.ReleaseOptions, caps *chartutil.Capabilities) (chartutil.Values, error) {
	if len(ch.Dependencies()) > 0 {
		return chartutil.ToRenderValues(ch, vals, opts, caps)
	}
	if vals == nil {
		vals = map[string]any{}
	}
	coalesceDefaults(ch.Metadata.Name, vals, deepCopyMap(ch.Values))
	if err := chartutil.ValidateAgainstSchema(ch, vals); err != nil {
		return nil, fmt.Errorf("values don't meet the specifications of the schema(s) in the following chart(s):\n%s", err)
	}
	return chartutil.Values{
		"Chart":        ch.Metadata,
		"Capabilities": caps,
		"Release": map[string]any{
			"Name":      opts.Name,
			"Namespace": opts.Namespace,
			"IsUpgrade": opts.IsUpgrade,
			"IsInstall": opts.IsInstall,
			"Revision":  opts.Revision,
			"Service":   "Helm",
		},
		"Values": chartutil.Values(vals),
	}, nil
}

// coalesceDefaults lays a chart's defaults under vals, in place, as Helm coalesces a
// chart's values: a key vals does not set takes the default, a null in vals removes the
// key, tables merge (chartutil.CoalesceTables, whose warnings name the key below the table).
func coalesceDefaults(chartName string, vals, defaults map[string]any) {
	for key, def := range defaults {
		v, ok := vals[key]
		switch {
		case !ok:
			vals[key] = def
		case v == nil:
			delete(vals, key)
		default:
			dst, isTable := v.(map[string]any)
			if !isTable {
				continue
			}
			if src, ok := def.(map[string]any); ok {
				chartutil.CoalesceTables(dst, src)
			} else if def != nil {
				log.Printf("warning: skipped value for %s.%s: Not a table.", chartName, key)
			}
		}
	}
}

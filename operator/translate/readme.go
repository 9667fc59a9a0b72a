package translate

import (
	"fmt"
	"strings"
)

// Readme says what the output holds and how to use it, release by release.
func Readme(releases []Release) string {
	var b strings.Builder
	b.WriteString(`# IstioOperator to Helm migration

` + "`istioctl manifest translate`" + ` wrote this folder; it changed nothing in the cluster. It moves an
Istio that istioctl installed from this spec under Helm, one Helm release per component, without
recreating any object: each release installs the chart istioctl renders the component with (copied
into ` + "`" + ChartsDir + "/`" + `) with the values istioctl gives it, so Helm renders the same objects.

## Steps

1. Point ` + "`kubectl`" + ` and ` + "`helm`" + ` (v3) at the cluster (its current context is used).
2. Run the scripts in this order; each marks the component's live objects as its release's
   (Helm's annotations and managed-by label), then runs ` + "`helm upgrade --install`" + `:
`)
	for _, r := range releases {
		fmt.Fprintf(&b, "   - `./%s`\n", r.ScriptFile())
	}
	b.WriteString(`3. ` + "`helm list -A`" + ` shows every release deployed. From now on change the install with
   ` + "`helm upgrade <release> " + ChartsDir + "/<chart> -f <release>-values.yaml`" + `, not with istioctl: an
   ` + "`istioctl install`" + ` would take the objects back, an ` + "`istioctl uninstall`" + ` would delete them.

Set ` + "`ISTIO_CHARTS`" + ` to install the charts from elsewhere (a copy of ` + "`" + ChartsDir + "/`" + `).

## Components
`)
	for _, r := range releases {
		fmt.Fprintf(&b, "* ✅ **Component `%s`** (%s): Helm release `%s` in namespace `%s`, chart `%s/%s`.\n\n",
			r.Name, title(r.Instance), r.Name, r.Namespace, ChartsDir, r.Chart)
		fmt.Fprintf(&b, "  Values: `%s`. Script: `%s`.\n", r.ValuesFile(), r.ScriptFile())
		if len(r.Differs) > 0 {
			h, i := r.DiffFiles()
			fmt.Fprintf(&b, "\n  ⚠️ Helm renders %d object(s) otherwise than istioctl (settings under `k8s` have no Helm value): %s.\n"+
				"  Compare them with `diff %s %s`. The live objects keep what only istioctl renders, but Helm does not\n"+
				"  manage it: set it through a value of the chart, if it has one, before you rely on Helm.\n",
				len(r.Differs), strings.Join(r.Differs, ", "), h, i)
		}
	}
	b.WriteString(`
## What differs, what stays

- The istiod ` + "`values`" + ` ConfigMap records the values it was rendered with: Helm's carries the
  translated values' ` + "`global.releaseLabel: istio`" + `, which keeps the objects' ` + "`release`" + ` and
  ` + "`app.kubernetes.io/instance`" + ` labels as istioctl set them (no pod is restarted).
- The CRDs come from the base chart's ` + "`crds/`" + ` directory: Helm installs them when they are missing and
  never upgrades or deletes them.
- What istioctl made outside the charts stays as it is: its install records (` + "`istioctl history`" + `) and
  the default revision tag's webhooks and Service (` + "`istioctl tag list`" + `).
`)
	return b.String()
}

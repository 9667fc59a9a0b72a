package printer

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/istioctl-installer/istioctl/operator/images"
)

// Images prints an image inventory: a table per image (component, container, image, the
// field that sets it, and a retired registry's note), or {"images": [...]} as JSON; the
// warning of a retired registry goes to errOut.
func Images(w, errOut io.Writer, list []images.Image, f Format) error {
	if f == JSON || f == YAML {
		if list == nil {
			list = []images.Image{}
		}
		return encode(w, f, map[string]any{"images": list}, encoding{})
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tCONTAINER\tIMAGE\tSET BY")
	retired := 0
	for _, im := range list {
		c := im.Container
		if c == "" {
			c = "-"
		}
		field := im.Field
		if field == "" {
			field = "-"
		}
		mark := ""
		if im.Retired != "" {
			mark, retired = " (retired registry)", retired+1
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%s\t%s\n", im.Component, c, im.Image, mark, field)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	seen, warn := map[string]bool{}, Warnings(errOut)
	for _, im := range list {
		if im.Retired != "" && !seen[im.Retired] {
			seen[im.Retired] = true
			warn(im.Retired)
		}
	}
	return nil
}

package cmd

import (
	"flag"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
)

// klogLevel is --vklog: client-go's own log lines (klog) are dropped unless it is above 0;
// then they go to stderr at that verbosity, as upstream's.
type klogLevel int

func (l *klogLevel) addFlags(fs *pflag.FlagSet) {
	fs.IntVar((*int)(l), "vklog", 0, "Print client-go's log lines on stderr at this verbosity (as kubectl's -v, e.g. --vklog=9); 0: none")
}

// apply routes klog: discarded, or to stderr at the level.
func (l klogLevel) apply() error {
	if l <= 0 {
		klog.SetLogger(logr.Discard())
		return nil
	}
	klog.ClearLogger()
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	return fs.Set("v", strconv.Itoa(int(l)))
}

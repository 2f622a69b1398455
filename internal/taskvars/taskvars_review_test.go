package taskvars

import (
	"testing"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// TestReview_bashEnvironmentNamesThatRunACommand: a bash task's secret
// answers become environment variables of the script under their own
// names (and Semaphore's scripts export their k=v arguments), and the
// script's children inherit them. Each name below makes a common program
// run a command line taken from its value, or load code or configuration
// from a path the value names, the way PATH, BASH_ENV, JAVA_TOOL_OPTIONS
// and GIT_SSH_COMMAND (refused) do. The deny-list misses them.
func TestReview_bashEnvironmentNamesThatRunACommand(t *testing.T) {
	for _, name := range []string{
		"JDK_JAVA_OPTIONS",      // the java launcher's JAVA_TOOL_OPTIONS (-javaagent, -XX:OnOutOfMemoryError=cmd)
		"LESSOPEN", "LESSCLOSE", // less runs "|cmd %s" on every file it opens
		"MANPAGER", "SYSTEMD_PAGER", // run as a command line, like PAGER (refused)
		"SYSTEMD_EDITOR", "KUBE_EDITOR", "FCEDIT", // run as a command line, like EDITOR (refused)
		"KUBECTL_EXTERNAL_DIFF",                                 // kubectl diff runs it
		"RSYNC_RSH", "RSYNC_CONNECT_PROG", "CVS_RSH", "SVN_SSH", // the remote shell command, like GIT_SSH_COMMAND
		"VIMINIT", "EXINIT", // ex commands, :!cmd included
		"ZDOTDIR",             // zsh's startup files, like BASH_ENV
		"HGRCPATH",            // mercurial's configuration: hooks run commands
		"CURL_HOME", "WGETRC", // where curl and wget read their configuration (proxies, output files)
		"MAKEFLAGS",               // --eval=$(shell cmd) when make runs
		"GOFLAGS",                 // -toolexec=cmd when go builds
		"RUSTC_WRAPPER",           // cargo runs it for every compile
		"LUA_CPATH",               // native modules, like LUA_PATH (refused)
		"PHPRC",                   // php.ini: auto_prepend_file
		"npm_config_script_shell", // npm runs scripts with it
		"PIP_INDEX_URL",           // pip installs code from it
	} {
		if !Forbidden(bastionv1.AppBash, name) {
			t.Errorf("bash: %q allowed", name)
		}
	}
}

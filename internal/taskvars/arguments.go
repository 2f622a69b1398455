package taskvars

import (
	"regexp"
	"strings"

	bastionv1 "github.com/bastion-dev/bastion/api/v1alpha1"
)

// A task's own arguments (POST /tasks' and a webhook's `arguments`, a
// Task's spec.arguments; never its template's, which the managers wrote)
// reach the program's command line after everything Bastion put there.
// allow_override_args_in_task lets a task narrow or inspect its run, not
// hand it a new command line: on ansible's, `-e ansible_connection=local`
// or `--extra-vars @FILE` would set the names that Forbidden refuses (and
// run their Jinja), `-i`, `--ssh-common-args` or `--become-exe` change where
// and how it connects. So each app has an allow-list of options; anything
// else, positional arguments included (ansible would run them as more
// playbooks), is refused naming the argument.

// CheckLimit refuses a limit that is not host patterns: one that starts
// with "-" (an option to ansible-playbook) or holds an "@" anywhere
// (ansible reads "@FILE", alone or in a list, as a file of patterns and
// prints each line that matches no host: a limit would read any file the
// runner can).
func CheckLimit(limit string) error {
	switch {
	case strings.HasPrefix(strings.TrimSpace(limit), "-"):
		return refusef("limit must not start with -")
	case strings.Contains(limit, "@"):
		return refusef("limit must be host patterns: it may not contain @ (ansible would read a file)")
	}
	return nil
}

// CheckCommandLine applies CheckLimit and CheckArguments: what a task
// adds to its program's command line.
func CheckCommandLine(app bastionv1.TemplateApp, limit string, args []string) error {
	if err := CheckLimit(limit); err != nil {
		return err
	}
	return CheckArguments(app, args)
}

// CheckArguments refuses the first of a task's arguments that its app's
// allow-list does not hold.
func CheckArguments(app bastionv1.TemplateApp, args []string) error {
	switch app {
	case bastionv1.AppBash:
		return checkBashArguments(args)
	case bastionv1.AppTerraform, bastionv1.AppTofu:
		return checkTerraformArguments(args)
	default:
		return checkAnsibleArguments(args)
	}
}

// argumentRefused is the refusal of an argument, named as it was written
// (up to its "=": the value after it is not repeated).
func argumentRefused(arg string) *Refusal {
	return refusef("the argument %q cannot be set by a task: it changes how the run connects or what it executes", arg)
}

// ansibleFlags are ansible-playbook's options that take no value and only
// narrow, check or describe the run; ansibleValued take a value.
var (
	ansibleFlags = set("-v", "--verbose", "-C", "--check", "-D", "--diff", "--flush-cache",
		"--force-handlers", "--list-hosts", "--list-tasks", "--list-tags", "--syntax-check")
	ansibleValued = set("-t", "--tags", "--skip-tags", "-l", "--limit", "-f", "--forks",
		"--start-at-task", "-T", "--timeout")
)

// checkAnsibleArguments reads the arguments as ansible-playbook's argparse
// does: "--opt value", "--opt=value", short options combined ("-vvv",
// "-Cv") with the last one's value attached ("-tweb", "-Cl web1") or next.
// A value given on its own must not look like an option (argparse would
// read it as one), and a limit must keep CheckLimit.
func checkAnsibleArguments(args []string) error {
	for i := 0; i < len(args); i++ {
		name, value, attached, err := ansibleOption(args[i])
		if err != nil {
			return err
		}
		if !ansibleValued[name] {
			continue
		}
		if !attached {
			if i+1 == len(args) || strings.HasPrefix(args[i+1], "-") {
				return refusef("the argument %q needs a value", name)
			}
			i++
			value = args[i]
		}
		if name == "-l" || name == "--limit" {
			if err := CheckLimit(value); err != nil {
				return err
			}
		}
	}
	return nil
}

// ansibleOption reads one argument: the allowed option it names (the last
// of a combined short group), and its value when attached to it.
func ansibleOption(arg string) (name, value string, attached bool, err error) {
	switch {
	case strings.HasPrefix(arg, "--"):
		name, value, attached = strings.Cut(arg, "=")
		if ansibleFlags[name] && !attached || ansibleValued[name] {
			return name, value, attached, nil
		}
		return "", "", false, argumentRefused(name)
	case strings.HasPrefix(arg, "-") && len(arg) > 1:
		for j := 1; j < len(arg); j++ {
			short := "-" + arg[j:j+1]
			switch {
			case ansibleValued[short]:
				rest := arg[j+1:]
				return short, strings.TrimPrefix(rest, "="), rest != "", nil
			case !ansibleFlags[short]:
				return "", "", false, argumentRefused(short)
			}
		}
		return "-" + arg[len(arg)-1:], "", false, nil
	}
	return "", "", false, argumentRefused(arg)
}

// terraformBools and terraformValued are the options of `terraform plan`
// a task may add, by name without dashes (Go's flag package takes "-name"
// and "--name"). A boolean is set alone or "=true|false" (never from the
// next argument); -input only "=false" (the run has no one to answer).
// A valued option takes its value after "=" or as the next argument, in
// the form its pattern allows. -destroy is not among them: planning the
// destruction of everything is the template's decision, not a task's.
var (
	terraformBools  = set("refresh-only", "compact-warnings", "no-color", "refresh", "lock", "input")
	terraformValued = map[string]*regexp.Regexp{
		"target":       regexp.MustCompile(`^[^-]`),
		"replace":      regexp.MustCompile(`^[^-]`),
		"parallelism":  regexp.MustCompile(`^[0-9]+$`),
		"lock-timeout": regexp.MustCompile(`^[0-9]+(ms|s|m|h)?$`),
	}
	boolValue = regexp.MustCompile(`^(true|false)$`)
)

// checkTerraformArguments allows terraformBools and terraformValued.
func checkTerraformArguments(args []string) error {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, value, attached := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-"), "=")
		pattern, valued := terraformValued[name]
		switch {
		case !strings.HasPrefix(arg, "-"):
			return argumentRefused(arg)
		case name == "input" && !(attached && value == "false"):
			return refusef("the argument %q may only be -input=false", arg)
		case terraformBools[name] && (!attached || boolValue.MatchString(value)):
		case valued && attached && pattern.MatchString(value):
		case valued && !attached && i+1 < len(args) && pattern.MatchString(args[i+1]):
			i++
		default:
			return argumentRefused(strings.SplitN(arg, "=", 2)[0])
		}
	}
	return nil
}

// checkBashArguments lets every argument through as data, except
// NAME=value where the name is one a bash task may not set: Semaphore's
// scripts read their k=v arguments as variables and often export them.
func checkBashArguments(args []string) error {
	for _, arg := range args {
		name, _, isVar := strings.Cut(arg, "=")
		if isVar && validName.MatchString(name) && Forbidden(bastionv1.AppBash, name) {
			return argumentRefused(name + "=")
		}
	}
	return nil
}

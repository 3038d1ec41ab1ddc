package repl

// scanState is what scanInput found at the end of an input.
type scanState struct {
	// open reports that the input cannot be complete yet: a bracket, a
	// template literal, a block comment or an escaped line end is still
	// open. The REPL then asks for another line.
	open bool
	// empty reports that the input holds nothing but white space and
	// comments.
	empty bool
}

// scanInput decides whether src is ready to run, without parsing it: it
// tracks brackets, strings, template literals (with ${...} nesting),
// comments and regular-expression literals. A stray closing bracket or an
// unterminated one-line string make the input "complete", so that the
// engine reports the syntax error instead of the REPL waiting for more.
//
// The one ambiguity of JavaScript's grammar that matters here, whether /
// starts a regular expression or divides, is settled by the previous
// token, as most highlighters do; a wrong guess can only make the REPL
// run an input early (the engine then reports a syntax error) or ask for
// one more line.
func scanInput(src string) scanState {
	const (
		code = iota
		lineComment
		blockComment
		str
		template
		regex
		regexClass
	)
	var (
		stack      []byte // open brackets; '$' for a template's ${
		mode       = code
		quote      byte
		regexOK    = true // a / here starts a regular expression
		empty      = true
		word       []byte // the identifier being read, for keywords
		lastEscape bool   // the input ends with a backslash inside a string
	)
	endWord := func() {
		if len(word) > 0 {
			regexOK = regexKeywords[string(word)]
			word = word[:0]
		}
	}
	for i := 0; i < len(src); i++ {
		ch := src[i]
		lastEscape = false
		switch mode {
		case lineComment:
			if ch == '\n' {
				mode = code
			}
			continue
		case blockComment:
			if ch == '*' && i+1 < len(src) && src[i+1] == '/' {
				mode = code
				i++
			}
			continue
		case str:
			switch ch {
			case '\\':
				if i+1 == len(src) || (src[i+1] == '\n' && i+2 == len(src)) {
					lastEscape = true
				}
				i++
			case quote:
				mode = code
				regexOK = false
			case '\n':
				// Unterminated string: a syntax error for the engine to report.
				return scanState{empty: false}
			}
			continue
		case template:
			switch ch {
			case '\\':
				i++
			case '`':
				mode = code
				regexOK = false
			case '$':
				if i+1 < len(src) && src[i+1] == '{' {
					stack = append(stack, '$')
					mode = code
					regexOK = true
					i++
				}
			}
			continue
		case regex:
			switch ch {
			case '\\':
				i++
			case '[':
				mode = regexClass
			case '/':
				mode = code
				regexOK = false
			case '\n':
				return scanState{empty: false}
			}
			continue
		case regexClass:
			switch ch {
			case '\\':
				i++
			case ']':
				mode = regex
			case '\n':
				return scanState{empty: false}
			}
			continue
		}
		// code
		if isIdentByte(ch) {
			if len(word) == 0 && ch >= '0' && ch <= '9' {
				// A number: not a keyword, and division may follow.
				word = append(word, '0')
			} else {
				word = append(word, ch)
			}
			empty = false
			continue
		}
		endWord()
		switch ch {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			continue
		case '/':
			if i+1 < len(src) && src[i+1] == '/' {
				mode = lineComment
				i++
				continue
			}
			if i+1 < len(src) && src[i+1] == '*' {
				mode = blockComment
				i++
				continue
			}
			empty = false
			if regexOK {
				mode = regex
				continue
			}
			regexOK = true
			continue
		}
		empty = false
		switch ch {
		case '\'', '"':
			mode, quote = str, ch
		case '`':
			mode = template
		case '(', '[', '{':
			stack = append(stack, ch)
			regexOK = true
		case ')', ']', '}':
			if len(stack) == 0 {
				return scanState{}
			}
			top := stack[len(stack)-1]
			if top == '$' && ch == '}' {
				stack = stack[:len(stack)-1]
				mode = template
				continue
			}
			if top != openerOf(ch) {
				return scanState{}
			}
			stack = stack[:len(stack)-1]
			// After ) or ] a / divides; after } it usually starts a
			// statement, but division is the safer guess (see above).
			regexOK = false
		default:
			regexOK = true
		}
	}
	endWord()
	open := len(stack) > 0 || mode == template || mode == blockComment || lastEscape
	return scanState{open: open, empty: empty && !open}
}

func openerOf(ch byte) byte {
	switch ch {
	case ')':
		return '('
	case ']':
		return '['
	}
	return '{'
}

func isIdentByte(ch byte) bool {
	return ch == '_' || ch == '$' || ch >= 0x80 ||
		(ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')
}

// regexKeywords are the words after which / starts a regular expression.
var regexKeywords = map[string]bool{
	"return": true, "typeof": true, "instanceof": true, "in": true, "of": true,
	"new": true, "delete": true, "void": true, "throw": true, "case": true,
	"do": true, "else": true, "yield": true, "await": true,
}

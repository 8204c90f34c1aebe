import { HighlightStyle, StreamLanguage, syntaxHighlighting, type StringStream } from '@codemirror/language';
import { tags } from '@lezer/highlight';

interface TokenState {
  /** Inside a block comment or a raw (backtick) string that continues on the next line. */
  inside: 'comment' | 'raw' | null;
}

const IDENT = /^[\p{L}_][\p{L}\p{Nd}_]*(?:\.[\p{L}_][\p{L}\p{Nd}_]*)*/u;

/**
 * Highlighting for the block configuration language: block names (`stage.json`, followed by an
 * optional label and `{`), attribute names (followed by `=`), strings, raw strings, numbers,
 * `true`/`false`/`null` and both comment forms.
 */
export const blockSyntax = StreamLanguage.define<TokenState>({
  name: 'alloy',
  startState: () => ({ inside: null }),
  token(stream: StringStream, state: TokenState): string | null {
    if (state.inside === 'comment') return blockCommentRest(stream, state);
    if (state.inside === 'raw') return rawStringRest(stream, state);
    if (stream.eatSpace()) return null;
    if (stream.match('//')) {
      stream.skipToEnd();
      return 'lineComment';
    }
    if (stream.match('/*')) {
      state.inside = 'comment';
      return blockCommentRest(stream, state);
    }
    if (stream.eat('"')) {
      let escaped = false;
      for (let ch = stream.next(); ch !== undefined; ch = stream.next()) {
        if (ch === '"' && !escaped) break;
        escaped = !escaped && ch === '\\';
      }
      return 'string';
    }
    if (stream.eat('`')) {
      state.inside = 'raw';
      return rawStringRest(stream, state);
    }
    if (stream.match(/^(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)/)) return 'number';
    const ident = stream.match(IDENT) as RegExpMatchArray | null;
    if (ident) {
      const word = ident[0];
      if (word === 'true' || word === 'false') return 'bool';
      if (word === 'null') return 'null';
      if (stream.match(/^\s*(?:"(?:[^"\\]|\\.)*"\s*)?\{/, false)) return 'typeName';
      if (stream.match(/^\s*=(?!=)/, false)) return 'propertyName';
      if (stream.match(/^\s*\(/, false)) return 'function(variableName)';
      return 'variableName';
    }
    const ch = stream.next();
    if (ch === '{' || ch === '}') return 'brace';
    if (ch === '[' || ch === ']') return 'squareBracket';
    if (ch === '(' || ch === ')') return 'paren';
    if (ch === ',' || ch === '.') return 'punctuation';
    return 'operator';
  },
  languageData: { commentTokens: { line: '//', block: { open: '/*', close: '*/' } }, closeBrackets: { brackets: ['(', '[', '{', '"'] } },
});

function blockCommentRest(stream: StringStream, state: TokenState): string {
  if (stream.skipTo('*/')) {
    stream.pos += 2;
    state.inside = null;
  } else {
    stream.skipToEnd();
  }
  return 'blockComment';
}

function rawStringRest(stream: StringStream, state: TokenState): string {
  if (stream.skipTo('`')) {
    stream.pos += 1;
    state.inside = null;
  } else {
    stream.skipToEnd();
  }
  return 'string';
}

/** Colours chosen for at least 4.5:1 contrast on the white editor background. */
export const blockHighlight = syntaxHighlighting(
  HighlightStyle.define([
    { tag: tags.typeName, color: '#6639ba', fontWeight: '600' },
    { tag: tags.propertyName, color: '#953800' },
    { tag: tags.string, color: '#0a3069' },
    { tag: tags.number, color: '#0550ae' },
    { tag: [tags.bool, tags.null], color: '#cf222e' },
    { tag: [tags.lineComment, tags.blockComment], color: '#57606a', fontStyle: 'italic' },
    { tag: tags.function(tags.variableName), color: '#8250df' },
    { tag: tags.operator, color: '#1f2328' },
  ]),
);

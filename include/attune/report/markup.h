// Escaping text for the report: text from logs and the journal is shown as
// text, never read as markup, in HTML, inline SVG and Markdown alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace attune::report {

// & < > " ' as entities; control bytes other than tab and newline (not
// allowed in XML) as U+FFFD. Safe in element text and quoted attributes.
std::string escape_html(std::string_view text);

// One table cell or list item of Markdown: HTML-escaped, `|`, `\`, `*`, `_`,
// backticks and brackets backslash-escaped, line breaks as spaces.
std::string escape_markdown(std::string_view text);

// A code fence longer than any run of backticks in `text`.
std::string markdown_fence(std::string_view text);

// "10240", "-" when missing.
std::string tokens_text(const std::optional<double>& v);

}  // namespace attune::report

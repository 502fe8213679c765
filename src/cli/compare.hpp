// `culua compare old.json new.json`: classifies each result point as same, faster or slower.
#pragma once

namespace culua::detail::cli {

// argv[0] is the program, argv[1] "compare"; returns the exit status.
int compare_main(int argc, char** argv);

}  // namespace culua::detail::cli

"""Writes C definitions, returning fmi3Error, of every FMI 3.0 function that
an FMU source does not define itself (FMPy, like other importers, loads the
whole API by name). Usage: fmi3_stubs.py fmi3FunctionTypes.h SOURCE.c > stubs.c,
SOURCE.c preprocessed (build.sh runs `cc -E`), so that the functions written
by fmi3_common.h's macros count as defined."""
import re
import sys

types_h, source = sys.argv[1], open(sys.argv[2]).read()
text = open(types_h).read()
text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
print('#include "fmi3Functions.h"')
for ret, name, params in re.findall(r"typedef\s+(fmi3Status|fmi3Instance|void|const char\*)\s+(fmi3\w+)TYPE\s*\((.*?)\);", text, flags=re.S):
    if re.search(r"\b%s\s*\(" % name, source):
        continue
    params = " ".join(params.split())
    body = {"fmi3Status": "return fmi3Error;", "fmi3Instance": "return NULL;", "void": "", "const char*": 'return "";'}[ret]
    print(f"{ret} {name}({params}) {{ {body} }}")

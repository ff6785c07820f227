"""Rewrites an imported decode step (stdin, `sinter compile --compile-to import`) into the form of
Gemma 2's eager export: every attention score add + softmax becomes
cap * tanh(scores / cap) + mask, with the softmax in fp32 between casts. Prints the result.

Usage: insert_softcap.py CAP < imported.mlir > capped.mlir
"""

import re
import sys

cap = float(sys.argv[1])
text = sys.stdin.read()
scores_then_softmax = re.compile(
    r"    (?P<sum>%\d+) = sinter\.add (?P<scores>%\d+), (?P<mask>%\d+) : "
    r"\((?P<type>tensor<[0-9x]+xbf16>), (?P<mask_type>tensor<[^>]+>)\) -> (?P=type)\n"
    r"    (?P<probs>%\d+) = sinter\.softmax (?P=sum) \{axis = 3 : i64\} : "
    r"\((?P=type)\) -> (?P=type)\n")
count = 0


def capped(m):
    global count
    count += 1
    n, t = count, m["type"]
    wide = t.replace("xbf16>", "xf32>")
    return (
        f"    %cap{n} = sinter.constant dense<{cap:e}> : tensor<bf16>\n"
        f"    %div{n} = sinter.div {m['scores']}, %cap{n} : ({t}, tensor<bf16>) -> {t}\n"
        f"    %tanh{n} = sinter.unary \"tanh\" %div{n} : ({t}) -> {t}\n"
        f"    %capped{n} = sinter.mul %tanh{n}, %cap{n} : ({t}, tensor<bf16>) -> {t}\n"
        f"    {m['sum']} = sinter.add %capped{n}, {m['mask']} : ({t}, {m['mask_type']}) -> {t}\n"
        f"    %wide{n} = sinter.cast {m['sum']} : ({t}) -> {wide}\n"
        f"    %softmax{n} = sinter.softmax %wide{n} {{axis = 3 : i64}} : ({wide}) -> {wide}\n"
        f"    {m['probs']} = sinter.cast %softmax{n} : ({wide}) -> {t}\n")


out = scores_then_softmax.sub(capped, text)
if count == 0:
    sys.exit("insert_softcap.py: no attention scores + softmax in the input")
sys.stdout.write(out)

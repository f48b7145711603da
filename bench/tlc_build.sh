#!/bin/sh
# Build TLC's tla2tools.jar from a tlaplus/tlaplus checkout, for bench/tlc_paxos.py,
# without ant or Maven Central: the steps of the checkout's
# tlatools/org.lamport.tlatools/customBuild.xml (generate the parser with JavaCC,
# compile for Java 11, unpack the runtime jars into the classes, jar), using only
# the jars the repository carries in lib/ and a JDK (Debian's openjdk-17).
#
#   sh bench/tlc_build.sh CHECKOUT OUT_DIR     # writes OUT_DIR/tla2tools.jar
#
# Nothing of TLC belongs in this repository: build it outside, e.g. in /work/tlc/.
set -eu
src=$(cd "$1/tlatools/org.lamport.tlatools" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src/src" "$src/javacc" "$work/"
jars="lib/javax.mail/mailapi-1.6.3.jar lib/jline/jline-terminal-3.25.0.jar lib/jline/jline-console-3.25.0.jar
lib/jline/jline-builtins-3.25.0.jar lib/jline/jline-reader-3.25.0.jar lib/gson/gson-2.8.6.jar
lib/lsp/org.eclipse.lsp4j.jsonrpc_0.21.1.v20230829-0012.jar lib/lsp/org.eclipse.lsp4j.debug_0.21.1.v20230829-0012.jar
lib/prettier4j-0.3.2.jar"
cp=$(for j in $jars; do printf '%s:' "$src/$j"; done)
cd "$work"
java -Dfile.encoding=UTF-8 -cp "$src/lib/javacc-4.0.jar" javacc -OUTPUT_DIRECTORY=src/tla2sany/parser javacc/tla+.jj
mkdir class
find src -name '*.java' > sources.txt
javac -nowarn -encoding UTF-8 --release 11 -d class -cp "$cp" @sources.txt
(cd src && find . -type f ! -name '*.java' -exec cp --parents {} ../class/ \;)
for j in $jars; do
    (cd class && unzip -qo "$src/$j" -x 'META-INF/MANIFEST.MF' 'META-INF/*.SF' 'META-INF/*.RSA' 'META-INF/*.DSA' 2>/dev/null)
done
printf 'Main-Class: tlc2.TLC\n' > manifest.txt
jar cfm "$out/tla2tools.jar" manifest.txt -C class .
echo "built $out/tla2tools.jar"

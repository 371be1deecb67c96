const V = 11
const D = 8
const H = 2
const L = 2
const F = 32
dim T = 4

param tok : R[V:11, D:8] = normal(0.02)
param pos : R[T:4, D:8] = normal(0.02)
param blocks.ln1.g : R[L:2, D:8] = ones stack 1
param blocks.ln1.b : R[L:2, D:8] = zeros stack 1
param blocks.attn.wq.w : R[L:2, D:8, D:8] = normal(0.02) stack 1
param blocks.attn.wq.b : R[L:2, D:8] = zeros stack 1
param blocks.attn.wk.w : R[L:2, D:8, D:8] = normal(0.02) stack 1
param blocks.attn.wk.b : R[L:2, D:8] = zeros stack 1
param blocks.attn.wv.w : R[L:2, D:8, D:8] = normal(0.02) stack 1
param blocks.attn.wv.b : R[L:2, D:8] = zeros stack 1
param blocks.attn.proj.w : R[L:2, D:8, D:8] = normal(0.02) stack 1
param blocks.attn.proj.b : R[L:2, D:8] = zeros stack 1
param blocks.ln2.g : R[L:2, D:8] = ones stack 1
param blocks.ln2.b : R[L:2, D:8] = zeros stack 1
param blocks.ff.up.w : R[L:2, D:8, F:32] = normal(0.02) stack 1
param blocks.ff.up.b : R[L:2, F:32] = zeros stack 1
param blocks.ff.down.w : R[L:2, F:32, D:8] = normal(0.02) stack 1
param blocks.ff.down.b : R[L:2, D:8] = zeros stack 1
param ln_f.g : R[D:8] = ones
param ln_f.b : R[D:8] = zeros
param head : R[D:8, V:11] = zeros

fn FeedForward.apply module FeedForward ($0 x : R[T:4, D:8]) -> R[T:4, D:8] {
  %0 = param "up.w" : R[D:8, F:32]
  %1 = contract($0, %0) spec="xy,yz->xz" : R[T:4, F:32]
  %2 = param "up.b" : R[F:32]
  %3 = add(%1, %2) : R[T:4, F:32]
  %4 = gelu_tanh(%3) : R[T:4, F:32]
  %5 = param "down.w" : R[F:32, D:8]
  %6 = contract(%4, %5) spec="xy,yz->xz" : R[T:4, D:8]
  %7 = param "down.b" : R[D:8]
  %8 = add(%6, %7) : R[T:4, D:8]
  return %8
}

fn FeedForward.apply.vjp module FeedForward ($0 x : R[T:4, D:8], $1 cotangent : R[T:4, D:8] adjoint %8 adjoint %6) -> ("$0" : R[4, 8], "up.w" : R[8, 32], "up.b" : R[32], "down.w" : R[32, 8], "down.b" : R[8]) {
  %0 = param "up.w" : R[D:8, F:32]
  %1 = contract($0, %0) spec="xy,yz->xz" : R[T:4, F:32]
  %2 = param "up.b" : R[F:32]
  %3 = add(%1, %2) : R[T:4, F:32]
  %4 = gelu_tanh(%3) : R[T:4, F:32]
  %5 = param "down.w" : R[F:32, D:8]
  %6 = contract(%4, %5) spec="xy,yz->xz" : R[T:4, D:8]
  %7 = param "down.b" : R[D:8]
  %8 = add(%6, %7) : R[T:4, D:8]
  %9 = sum($1) axes=[0] : R[1, 8]
  %10 = reshape(%9) : R[8] adjoint %7
  %11 = contract($1, %5) spec="xz,yz->xy" : R[4, 32] adjoint %4
  %12 = contract($1, %4) spec="xz,xy->yz" : R[32, 8] adjoint %5
  %13 = gelu_tanh_grad(%3) : R[4, 32]
  %14 = mul(%11, %13) : R[4, 32] adjoint %3 adjoint %1
  %15 = sum(%14) axes=[0] : R[1, 32]
  %16 = reshape(%15) : R[32] adjoint %2
  %17 = contract(%14, %0) spec="xz,yz->xy" : R[4, 8]
  %18 = contract(%14, $0) spec="xz,xy->yz" : R[8, 32] adjoint %0
  return %17, %18, %16, %12, %10
}

fn LayerNorm.apply module LayerNorm ($0 x : R[T:4, D:8]) -> R[T:4, D:8] {
  %0 = mean($0) axes=[1] : R[T:4, D:1]
  %1 = sub($0, %0) : R[T:4, D:8]
  %2 = mul(%1, %1) : R[T:4, D:8]
  %3 = mean(%2) axes=[1] : R[T:4, D:1]
  %4 = literal "1e-5" : R
  %5 = add(%3, %4) : R[T:4, D:1]
  %6 = rsqrt(%5) : R[T:4, D:1]
  %7 = mul(%1, %6) : R[T:4, D:8]
  %8 = param "g" : R[D:8]
  %9 = mul(%7, %8) : R[T:4, D:8]
  %10 = param "b" : R[D:8]
  %11 = add(%9, %10) : R[T:4, D:8]
  return %11
}

fn LayerNorm.apply.vjp module LayerNorm ($0 x : R[T:4, D:8], $1 cotangent : R[T:4, D:8] adjoint %11 adjoint %9) -> ("$0" : R[4, 8], "g" : R[8], "b" : R[8]) {
  %0 = mean($0) axes=[1] : R[T:4, D:1]
  %1 = sub($0, %0) : R[T:4, D:8]
  %2 = mul(%1, %1) : R[T:4, D:8]
  %3 = mean(%2) axes=[1] : R[T:4, D:1]
  %4 = literal "1e-5" : R
  %5 = add(%3, %4) : R[T:4, D:1]
  %6 = rsqrt(%5) : R[T:4, D:1]
  %7 = mul(%1, %6) : R[T:4, D:8]
  %8 = param "g" : R[D:8]
  %9 = mul(%7, %8) : R[T:4, D:8]
  %10 = param "b" : R[D:8]
  %11 = add(%9, %10) : R[T:4, D:8]
  %12 = sum($1) axes=[0] : R[1, 8]
  %13 = reshape(%12) : R[8] adjoint %10
  %14 = mul($1, %8) : R[4, 8] adjoint %7
  %15 = mul($1, %7) : R[4, 8]
  %16 = sum(%15) axes=[0] : R[1, 8]
  %17 = reshape(%16) : R[8] adjoint %8
  %18 = mul(%14, %6) : R[4, 8]
  %19 = mul(%14, %1) : R[4, 8]
  %20 = sum(%19) axes=[1] : R[4, 1] adjoint %6
  %21 = mul(%6, %6) : R[4, 1]
  %22 = mul(%21, %6) : R[4, 1]
  %23 = literal "-0.5" : R
  %24 = mul(%23, %22) : R[4, 1]
  %25 = mul(%20, %24) : R[4, 1] adjoint %5 adjoint %3
  %26 = literal "8" : R
  %27 = div(%25, %26) : R[4, 1]
  %28 = broadcast(%27) : R[4, 8] adjoint %2
  %29 = mul(%28, %1) : R[4, 8]
  %30 = add(%18, %29) : R[4, 8]
  %31 = mul(%28, %1) : R[4, 8]
  %32 = add(%30, %31) : R[4, 8] adjoint %1
  %33 = neg(%32) : R[4, 8]
  %34 = sum(%33) axes=[1] : R[4, 1] adjoint %0
  %35 = div(%34, %26) : R[4, 1]
  %36 = broadcast(%35) : R[4, 8]
  %37 = add(%32, %36) : R[4, 8]
  return %37, %17, %13
}

fn Linear.apply module Linear ($0 x : R[T:4, D:8]) -> R[T:4, D:8] {
  %0 = param "w" : R[D:8, D:8]
  %1 = contract($0, %0) spec="xy,yz->xz" : R[T:4, D:8]
  %2 = param "b" : R[D:8]
  %3 = add(%1, %2) : R[T:4, D:8]
  return %3
}

fn Linear.apply.vjp module Linear ($0 x : R[T:4, D:8], $1 cotangent : R[T:4, D:8] adjoint %3 adjoint %1) -> ("$0" : R[4, 8], "w" : R[8, 8], "b" : R[8]) {
  %0 = param "w" : R[D:8, D:8]
  %1 = contract($0, %0) spec="xy,yz->xz" : R[T:4, D:8]
  %2 = param "b" : R[D:8]
  %3 = add(%1, %2) : R[T:4, D:8]
  %4 = sum($1) axes=[0] : R[1, 8]
  %5 = reshape(%4) : R[8] adjoint %2
  %6 = contract($1, %0) spec="xz,yz->xy" : R[4, 8]
  %7 = contract($1, $0) spec="xz,xy->yz" : R[8, 8] adjoint %0
  return %6, %7, %5
}

fn SelfAttention.heads module SelfAttention ($0 x : R[T:4, D:8]) -> R[H:2, T:4, 4] {
  %0 = reshape($0) : R[T:4, H:2, 4]
  %1 = transpose(%0) axes=[1, 0, 2] : R[H:2, T:4, 4]
  return %1
}

fn SelfAttention.heads.vjp module SelfAttention ($0 x : R[T:4, D:8], $1 cotangent : R[H:2, T:4, 4] adjoint %1) -> ("$0" : R[4, 8]) {
  %0 = reshape($0) : R[T:4, H:2, 4]
  %1 = transpose(%0) axes=[1, 0, 2] : R[H:2, T:4, 4]
  %2 = transpose($1) axes=[1, 0, 2] : R[4, 2, 4] adjoint %0
  %3 = reshape(%2) : R[4, 8]
  return %3
}

fn SelfAttention.apply module SelfAttention ($0 x : R[T:4, D:8]) -> R[T:4, D:8] {
  %0 = call @Linear.apply($0) path="wq" : R[T:4, D:8]
  %1 = call @SelfAttention.heads(%0) : R[H:2, T:4, 4]
  %2 = call @Linear.apply($0) path="wk" : R[T:4, D:8]
  %3 = call @SelfAttention.heads(%2) : R[H:2, T:4, 4]
  %4 = call @Linear.apply($0) path="wv" : R[T:4, D:8]
  %5 = call @SelfAttention.heads(%4) : R[H:2, T:4, 4]
  %6 = transpose(%3) axes=[0, 2, 1] : R[H:2, 4, T:4]
  %7 = contract(%1, %6) spec="axy,ayz->axz" : R[H:2, T:4, T:4]
  %8 = literal "8" : R
  %9 = literal "2" : R
  %10 = div(%8, %9) : R
  %11 = rsqrt(%10) : R
  %12 = mul(%7, %11) : R[H:2, T:4, T:4]
  %13 = causal_mask(%12) : R[H:2, T:4, T:4]
  %14 = softmax(%13) axes=[2] : R[H:2, T:4, T:4]
  %15 = contract(%14, %5) spec="axy,ayz->axz" : R[H:2, T:4, 4]
  %16 = transpose(%15) axes=[1, 0, 2] : R[T:4, H:2, 4]
  %17 = reshape(%16) : R[T:4, D:8]
  %18 = call @Linear.apply(%17) path="proj" : R[T:4, D:8]
  return %18
}

fn SelfAttention.apply.vjp module SelfAttention ($0 x : R[T:4, D:8], $1 cotangent : R[T:4, D:8] adjoint %18) -> ("$0" : R[4, 8], "wq.w" : R[8, 8], "wq.b" : R[8], "wk.w" : R[8, 8], "wk.b" : R[8], "wv.w" : R[8, 8], "wv.b" : R[8], "proj.w" : R[8, 8], "proj.b" : R[8]) {
  %0 = call @Linear.apply($0) path="wq" : R[T:4, D:8]
  %1 = call @SelfAttention.heads(%0) : R[H:2, T:4, 4]
  %2 = call @Linear.apply($0) path="wk" : R[T:4, D:8]
  %3 = call @SelfAttention.heads(%2) : R[H:2, T:4, 4]
  %4 = call @Linear.apply($0) path="wv" : R[T:4, D:8]
  %5 = call @SelfAttention.heads(%4) : R[H:2, T:4, 4]
  %6 = transpose(%3) axes=[0, 2, 1] : R[H:2, 4, T:4]
  %7 = contract(%1, %6) spec="axy,ayz->axz" : R[H:2, T:4, T:4]
  %8 = literal "8" : R
  %9 = literal "2" : R
  %10 = div(%8, %9) : R
  %11 = rsqrt(%10) : R
  %12 = mul(%7, %11) : R[H:2, T:4, T:4]
  %13 = causal_mask(%12) : R[H:2, T:4, T:4]
  %14 = softmax(%13) axes=[2] : R[H:2, T:4, T:4]
  %15 = contract(%14, %5) spec="axy,ayz->axz" : R[H:2, T:4, 4]
  %16 = transpose(%15) axes=[1, 0, 2] : R[T:4, H:2, 4]
  %17 = reshape(%16) : R[T:4, D:8]
  %18 = call @Linear.apply(%17) path="proj" : R[T:4, D:8]
  %19 = call @Linear.apply.vjp(%17, $1) path="proj" : (R[4, 8], R[8, 8], R[8])
  %20 = get(%19) axes=[0] : R[4, 8] adjoint %17
  %21 = get(%19) axes=[1] : R[8, 8]
  %22 = get(%19) axes=[2] : R[8]
  %23 = reshape(%20) : R[4, 2, 4] adjoint %16
  %24 = transpose(%23) axes=[1, 0, 2] : R[2, 4, 4] adjoint %15
  %25 = contract(%24, %5) spec="axz,ayz->axy" : R[2, 4, 4] adjoint %14
  %26 = contract(%24, %14) spec="axz,axy->ayz" : R[2, 4, 4] adjoint %5
  %27 = mul(%25, %14) : R[2, 4, 4]
  %28 = sum(%27) axes=[2] : R[2, 4, 1]
  %29 = sub(%25, %28) : R[2, 4, 4]
  %30 = mul(%14, %29) : R[2, 4, 4] adjoint %13
  %31 = causal_mask(%30) literal="0" : R[2, 4, 4] adjoint %12
  %32 = mul(%31, %11) : R[2, 4, 4] adjoint %7
  %33 = mul(%31, %7) : R[2, 4, 4]
  %34 = sum(%33) axes=[0, 1, 2] : R[1, 1, 1]
  %35 = reshape(%34) : R adjoint %11
  %36 = mul(%11, %11) : R
  %37 = mul(%36, %11) : R
  %38 = literal "-0.5" : R
  %39 = mul(%38, %37) : R
  %40 = mul(%35, %39) : R adjoint %10
  %41 = contract(%32, %6) spec="axz,ayz->axy" : R[2, 4, 4] adjoint %1
  %42 = contract(%32, %1) spec="axz,axy->ayz" : R[2, 4, 4] adjoint %6
  %43 = transpose(%42) axes=[0, 2, 1] : R[2, 4, 4] adjoint %3
  %44 = call @SelfAttention.heads.vjp(%4, %26) : R[4, 8] adjoint %4
  %45 = call @Linear.apply.vjp($0, %44) path="wv" : (R[4, 8], R[8, 8], R[8])
  %46 = get(%45) axes=[0] : R[4, 8]
  %47 = get(%45) axes=[1] : R[8, 8]
  %48 = get(%45) axes=[2] : R[8]
  %49 = call @SelfAttention.heads.vjp(%2, %43) : R[4, 8] adjoint %2
  %50 = call @Linear.apply.vjp($0, %49) path="wk" : (R[4, 8], R[8, 8], R[8])
  %51 = get(%50) axes=[0] : R[4, 8]
  %52 = get(%50) axes=[1] : R[8, 8]
  %53 = get(%50) axes=[2] : R[8]
  %54 = add(%46, %51) : R[4, 8]
  %55 = call @SelfAttention.heads.vjp(%0, %41) : R[4, 8] adjoint %0
  %56 = call @Linear.apply.vjp($0, %55) path="wq" : (R[4, 8], R[8, 8], R[8])
  %57 = get(%56) axes=[0] : R[4, 8]
  %58 = get(%56) axes=[1] : R[8, 8]
  %59 = get(%56) axes=[2] : R[8]
  %60 = add(%54, %57) : R[4, 8]
  return %60, %58, %59, %52, %53, %47, %48, %21, %22
}

fn Block.apply module Block ($0 x : R[T:4, D:8]) -> R[T:4, D:8] {
  %0 = call @LayerNorm.apply($0) path="ln1" : R[T:4, D:8]
  %1 = call @SelfAttention.apply(%0) path="attn" : R[T:4, D:8]
  %2 = add($0, %1) : R[T:4, D:8]
  %3 = call @LayerNorm.apply(%2) path="ln2" : R[T:4, D:8]
  %4 = call @FeedForward.apply(%3) path="ff" : R[T:4, D:8]
  %5 = add(%2, %4) : R[T:4, D:8]
  return %5
}

fn Block.apply.vjp module Block ($0 x : R[T:4, D:8], $1 cotangent : R[T:4, D:8] adjoint %5 adjoint %4) -> ("$0" : R[4, 8], "ln1.g" : R[8], "ln1.b" : R[8], "attn.wq.w" : R[8, 8], "attn.wq.b" : R[8], "attn.wk.w" : R[8, 8], "attn.wk.b" : R[8], "attn.wv.w" : R[8, 8], "attn.wv.b" : R[8], "attn.proj.w" : R[8, 8], "attn.proj.b" : R[8], "ln2.g" : R[8], "ln2.b" : R[8], "ff.up.w" : R[8, 32], "ff.up.b" : R[32], "ff.down.w" : R[32, 8], "ff.down.b" : R[8]) {
  %0 = call @LayerNorm.apply($0) path="ln1" : R[T:4, D:8]
  %1 = call @SelfAttention.apply(%0) path="attn" : R[T:4, D:8]
  %2 = add($0, %1) : R[T:4, D:8]
  %3 = call @LayerNorm.apply(%2) path="ln2" : R[T:4, D:8]
  %4 = call @FeedForward.apply(%3) path="ff" : R[T:4, D:8]
  %5 = add(%2, %4) : R[T:4, D:8]
  %6 = call @FeedForward.apply.vjp(%3, $1) path="ff" : (R[4, 8], R[8, 32], R[32], R[32, 8], R[8])
  %7 = get(%6) axes=[0] : R[4, 8] adjoint %3
  %8 = get(%6) axes=[1] : R[8, 32]
  %9 = get(%6) axes=[2] : R[32]
  %10 = get(%6) axes=[3] : R[32, 8]
  %11 = get(%6) axes=[4] : R[8]
  %12 = call @LayerNorm.apply.vjp(%2, %7) path="ln2" : (R[4, 8], R[8], R[8])
  %13 = get(%12) axes=[0] : R[4, 8]
  %14 = get(%12) axes=[1] : R[8]
  %15 = get(%12) axes=[2] : R[8]
  %16 = add($1, %13) : R[4, 8] adjoint %2 adjoint %1
  %17 = call @SelfAttention.apply.vjp(%0, %16) path="attn" : (R[4, 8], R[8, 8], R[8], R[8, 8], R[8], R[8, 8], R[8], R[8, 8], R[8])
  %18 = get(%17) axes=[0] : R[4, 8] adjoint %0
  %19 = get(%17) axes=[1] : R[8, 8]
  %20 = get(%17) axes=[2] : R[8]
  %21 = get(%17) axes=[3] : R[8, 8]
  %22 = get(%17) axes=[4] : R[8]
  %23 = get(%17) axes=[5] : R[8, 8]
  %24 = get(%17) axes=[6] : R[8]
  %25 = get(%17) axes=[7] : R[8, 8]
  %26 = get(%17) axes=[8] : R[8]
  %27 = call @LayerNorm.apply.vjp($0, %18) path="ln1" : (R[4, 8], R[8], R[8])
  %28 = get(%27) axes=[0] : R[4, 8]
  %29 = get(%27) axes=[1] : R[8]
  %30 = get(%27) axes=[2] : R[8]
  %31 = add(%16, %28) : R[4, 8]
  return %31, %29, %30, %19, %20, %21, %22, %23, %24, %25, %26, %14, %15, %8, %9, %10, %11
}

fn GPT.apply module GPT ($0 tokens : Z[T:4]) -> R[T:4, V:11] {
  %0 = param "tok" : R[V:11, D:8]
  %1 = embed(%0, $0) : R[T:4, D:8]
  %2 = param "pos" : R[T:4, D:8]
  %3 = add(%1, %2) : R[T:4, D:8]
  %4 = fold @Block.apply(%3) path="blocks" : R[T:4, D:8]
  %5 = call @LayerNorm.apply(%4) path="ln_f" : R[T:4, D:8]
  %6 = param "head" : R[D:8, V:11]
  %7 = contract(%5, %6) spec="xy,yz->xz" : R[T:4, V:11]
  return %7
}

fn GPT.apply.vjp module GPT ($0 tokens : Z[T:4], $1 cotangent : R[T:4, V:11] adjoint %7) -> ("tok" : R[11, 8], "pos" : R[4, 8], "blocks.ln1.g" : R[2, 8], "blocks.ln1.b" : R[2, 8], "blocks.attn.wq.w" : R[2, 8, 8], "blocks.attn.wq.b" : R[2, 8], "blocks.attn.wk.w" : R[2, 8, 8], "blocks.attn.wk.b" : R[2, 8], "blocks.attn.wv.w" : R[2, 8, 8], "blocks.attn.wv.b" : R[2, 8], "blocks.attn.proj.w" : R[2, 8, 8], "blocks.attn.proj.b" : R[2, 8], "blocks.ln2.g" : R[2, 8], "blocks.ln2.b" : R[2, 8], "blocks.ff.up.w" : R[2, 8, 32], "blocks.ff.up.b" : R[2, 32], "blocks.ff.down.w" : R[2, 32, 8], "blocks.ff.down.b" : R[2, 8], "ln_f.g" : R[8], "ln_f.b" : R[8], "head" : R[8, 11]) {
  %0 = param "tok" : R[V:11, D:8]
  %1 = embed(%0, $0) : R[T:4, D:8]
  %2 = param "pos" : R[T:4, D:8]
  %3 = add(%1, %2) : R[T:4, D:8]
  %4 = fold_trace @Block.apply(%3) path="blocks" : (R[4, 8], R[2, 4, 8])
  %5 = get(%4) axes=[0] : R[4, 8]
  %6 = get(%4) axes=[1] : R[2, 4, 8]
  %7 = call @LayerNorm.apply(%5) path="ln_f" : R[T:4, D:8]
  %8 = param "head" : R[D:8, V:11]
  %9 = contract(%7, %8) spec="xy,yz->xz" : R[T:4, V:11]
  %10 = contract($1, %8) spec="xz,yz->xy" : R[4, 8] adjoint %5
  %11 = contract($1, %7) spec="xz,xy->yz" : R[8, 11] adjoint %6
  %12 = call @LayerNorm.apply.vjp(%5, %10) path="ln_f" : (R[4, 8], R[8], R[8])
  %13 = get(%12) axes=[0] : R[4, 8] adjoint %4
  %14 = get(%12) axes=[1] : R[8]
  %15 = get(%12) axes=[2] : R[8]
  %16 = fold_vjp @Block.apply.vjp(%6, %13) path="blocks" : (R[4, 8], R[2, 8], R[2, 8], R[2, 8, 8], R[2, 8], R[2, 8, 8], R[2, 8], R[2, 8, 8], R[2, 8], R[2, 8, 8], R[2, 8], R[2, 8], R[2, 8], R[2, 8, 32], R[2, 32], R[2, 32, 8], R[2, 8])
  %17 = get(%16) axes=[0] : R[4, 8] adjoint %3 adjoint %2 adjoint %1
  %18 = get(%16) axes=[1] : R[2, 8]
  %19 = get(%16) axes=[2] : R[2, 8]
  %20 = get(%16) axes=[3] : R[2, 8, 8]
  %21 = get(%16) axes=[4] : R[2, 8]
  %22 = get(%16) axes=[5] : R[2, 8, 8]
  %23 = get(%16) axes=[6] : R[2, 8]
  %24 = get(%16) axes=[7] : R[2, 8, 8]
  %25 = get(%16) axes=[8] : R[2, 8]
  %26 = get(%16) axes=[9] : R[2, 8, 8]
  %27 = get(%16) axes=[10] : R[2, 8]
  %28 = get(%16) axes=[11] : R[2, 8]
  %29 = get(%16) axes=[12] : R[2, 8]
  %30 = get(%16) axes=[13] : R[2, 8, 32]
  %31 = get(%16) axes=[14] : R[2, 32]
  %32 = get(%16) axes=[15] : R[2, 32, 8]
  %33 = get(%16) axes=[16] : R[2, 8]
  %34 = iota axes=[1] : Z[4, 11]
  %35 = reshape($0) : Z[4, 1]
  %36 = eq(%34, %35) : B[4, 11]
  %37 = convert(%36) : R[4, 11]
  %38 = contract(%37, %17) spec="pn,pd->nd" : R[11, 8] adjoint %0
  return %38, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %14, %15, %11
}

entry loss module GPT ($0 tokens : Z[5]) -> R {
  %0 = slice($0) axes=[0] starts=[0] stops=[4] : Z[4]
  %1 = call @GPT.apply(%0) : R[T:4, V:11]
  %2 = slice($0) axes=[0] starts=[1] stops=[5] : Z[4]
  %3 = cross_entropy(%1, %2) : R
  return %3
}

entry loss.vjp module GPT ($0 tokens : Z[5], $1 cotangent : R adjoint %3) -> ("tok" : R[11, 8], "pos" : R[4, 8], "blocks.ln1.g" : R[2, 8], "blocks.ln1.b" : R[2, 8], "blocks.attn.wq.w" : R[2, 8, 8], "blocks.attn.wq.b" : R[2, 8], "blocks.attn.wk.w" : R[2, 8, 8], "blocks.attn.wk.b" : R[2, 8], "blocks.attn.wv.w" : R[2, 8, 8], "blocks.attn.wv.b" : R[2, 8], "blocks.attn.proj.w" : R[2, 8, 8], "blocks.attn.proj.b" : R[2, 8], "blocks.ln2.g" : R[2, 8], "blocks.ln2.b" : R[2, 8], "blocks.ff.up.w" : R[2, 8, 32], "blocks.ff.up.b" : R[2, 32], "blocks.ff.down.w" : R[2, 32, 8], "blocks.ff.down.b" : R[2, 8], "ln_f.g" : R[8], "ln_f.b" : R[8], "head" : R[8, 11]) {
  %0 = slice($0) axes=[0] starts=[0] stops=[4] : Z[4]
  %1 = call @GPT.apply(%0) : R[T:4, V:11]
  %2 = slice($0) axes=[0] starts=[1] stops=[5] : Z[4]
  %3 = cross_entropy(%1, %2) : R
  %4 = softmax(%1) axes=[1] : R[4, 11]
  %5 = iota axes=[1] : Z[4, 11]
  %6 = reshape(%2) : Z[4, 1]
  %7 = eq(%5, %6) : B[4, 11]
  %8 = convert(%7) : R[4, 11]
  %9 = literal "4" : R
  %10 = div($1, %9) : R
  %11 = sub(%4, %8) : R[4, 11]
  %12 = mul(%11, %10) : R[4, 11] adjoint %1
  %13 = call @GPT.apply.vjp(%0, %12) : (R[11, 8], R[4, 8], R[2, 8], R[2, 8], R[2, 8, 8], R[2, 8], R[2, 8, 8], R[2, 8], R[2, 8, 8], R[2, 8], R[2, 8, 8], R[2, 8], R[2, 8], R[2, 8], R[2, 8, 32], R[2, 32], R[2, 32, 8], R[2, 8], R[8], R[8], R[8, 11])
  %14 = get(%13) axes=[0] : R[11, 8]
  %15 = get(%13) axes=[1] : R[4, 8]
  %16 = get(%13) axes=[2] : R[2, 8]
  %17 = get(%13) axes=[3] : R[2, 8]
  %18 = get(%13) axes=[4] : R[2, 8, 8]
  %19 = get(%13) axes=[5] : R[2, 8]
  %20 = get(%13) axes=[6] : R[2, 8, 8]
  %21 = get(%13) axes=[7] : R[2, 8]
  %22 = get(%13) axes=[8] : R[2, 8, 8]
  %23 = get(%13) axes=[9] : R[2, 8]
  %24 = get(%13) axes=[10] : R[2, 8, 8]
  %25 = get(%13) axes=[11] : R[2, 8]
  %26 = get(%13) axes=[12] : R[2, 8]
  %27 = get(%13) axes=[13] : R[2, 8]
  %28 = get(%13) axes=[14] : R[2, 8, 32]
  %29 = get(%13) axes=[15] : R[2, 32]
  %30 = get(%13) axes=[16] : R[2, 32, 8]
  %31 = get(%13) axes=[17] : R[2, 8]
  %32 = get(%13) axes=[18] : R[8]
  %33 = get(%13) axes=[19] : R[8]
  %34 = get(%13) axes=[20] : R[8, 11]
  return %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34
}

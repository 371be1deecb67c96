const D = 32
dim T = 4

param g : R[D:32] = ones
param b : R[D:32] = zeros

fn LayerNorm.apply module LayerNorm ($0 x : R[T:4, D:32]) -> R[T:4, D:32] {
  %0 = mean($0) axes=[1] : R[T:4, D:1]
  %1 = sub($0, %0) : R[T:4, D:32]
  %2 = mul(%1, %1) : R[T:4, D:32]
  %3 = mean(%2) axes=[1] : R[T:4, D:1]
  %4 = literal "1e-5" : R
  %5 = add(%3, %4) : R[T:4, D:1]
  %6 = rsqrt(%5) : R[T:4, D:1]
  %7 = mul(%1, %6) : R[T:4, D:32]
  %8 = param "g" : R[D:32]
  %9 = mul(%7, %8) : R[T:4, D:32]
  %10 = param "b" : R[D:32]
  %11 = add(%9, %10) : R[T:4, D:32]
  return %11
}

fn LayerNorm.apply.vjp module LayerNorm ($0 x : R[T:4, D:32], $1 cotangent : R[T:4, D:32] adjoint %11 adjoint %9) -> ("$0" : R[4, 32], "g" : R[32], "b" : R[32]) {
  %0 = mean($0) axes=[1] : R[T:4, D:1]
  %1 = sub($0, %0) : R[T:4, D:32]
  %2 = mul(%1, %1) : R[T:4, D:32]
  %3 = mean(%2) axes=[1] : R[T:4, D:1]
  %4 = literal "1e-5" : R
  %5 = add(%3, %4) : R[T:4, D:1]
  %6 = rsqrt(%5) : R[T:4, D:1]
  %7 = mul(%1, %6) : R[T:4, D:32]
  %8 = param "g" : R[D:32]
  %9 = mul(%7, %8) : R[T:4, D:32]
  %10 = param "b" : R[D:32]
  %11 = add(%9, %10) : R[T:4, D:32]
  %12 = sum($1) axes=[0] : R[1, 32]
  %13 = reshape(%12) : R[32] adjoint %10
  %14 = mul($1, %8) : R[4, 32] adjoint %7
  %15 = mul($1, %7) : R[4, 32]
  %16 = sum(%15) axes=[0] : R[1, 32]
  %17 = reshape(%16) : R[32] adjoint %8
  %18 = mul(%14, %6) : R[4, 32]
  %19 = mul(%14, %1) : R[4, 32]
  %20 = sum(%19) axes=[1] : R[4, 1] adjoint %6
  %21 = mul(%6, %6) : R[4, 1]
  %22 = mul(%21, %6) : R[4, 1]
  %23 = literal "-0.5" : R
  %24 = mul(%23, %22) : R[4, 1]
  %25 = mul(%20, %24) : R[4, 1] adjoint %5 adjoint %3
  %26 = literal "32" : R
  %27 = div(%25, %26) : R[4, 1]
  %28 = broadcast(%27) : R[4, 32] adjoint %2
  %29 = mul(%28, %1) : R[4, 32]
  %30 = add(%18, %29) : R[4, 32]
  %31 = mul(%28, %1) : R[4, 32]
  %32 = add(%30, %31) : R[4, 32] adjoint %1
  %33 = neg(%32) : R[4, 32]
  %34 = sum(%33) axes=[1] : R[4, 1] adjoint %0
  %35 = div(%34, %26) : R[4, 1]
  %36 = broadcast(%35) : R[4, 32]
  %37 = add(%32, %36) : R[4, 32]
  return %37, %17, %13
}

entry normalize module LayerNorm ($0 x : R[T:4, D:32]) -> R[T:4, D:32] precision rel_error "1e-3" {
  %0 = call @LayerNorm.apply($0) : R[T:4, D:32]
  return %0
}

entry normalize.vjp module LayerNorm ($0 x : R[T:4, D:32], $1 cotangent : R[T:4, D:32] adjoint %0) -> ("$0" : R[4, 32], "g" : R[32], "b" : R[32]) {
  %0 = call @LayerNorm.apply($0) : R[T:4, D:32]
  %1 = call @LayerNorm.apply.vjp($0, $1) : (R[4, 32], R[32], R[32])
  %2 = get(%1) axes=[0] : R[4, 32]
  %3 = get(%1) axes=[1] : R[32]
  %4 = get(%1) axes=[2] : R[32]
  return %2, %3, %4
}
